/** An encrypted store's data keys, read (ports/data-keys.ts), once for every SQL store: sql/data-keys.ts's statement. */
import type { DataKeys } from "../ports/data-keys.js";
import { toDataKey } from "../rows.js";
import type { SqlDriver } from "./driver.js";
import { LIST_DATA_KEYS } from "./data-keys.js";

export function dataKeyReads(d: SqlDriver): Pick<DataKeys, "dataKeys"> {
  return {
    dataKeys: async () => (await d.all(LIST_DATA_KEYS)).map(toDataKey),
  };
}
