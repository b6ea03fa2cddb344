/** An encrypted store's wrapped data keys (ports/data-keys.ts), written once for every SQL store on its driver: sql/data-keys.ts's statements. */
import { missingDataKey } from "../faults.js";
import type { DataKeys } from "../ports/data-keys.js";
import { toDataKey } from "../rows.js";
import { DELETE_DATA_KEYS, INSERT_DATA_KEY, LIST_DATA_KEYS, REWRAP_DATA_KEY } from "./data-keys.js";
import type { SqlDriver, Statement } from "./driver.js";

export function sqlDataKeys(d: SqlDriver): DataKeys {
  const insert = (rows: Parameters<DataKeys["addDataKeys"]>[0]): Statement[] => rows.map((k) => ({ sql: INSERT_DATA_KEY, params: [k.id, k.kekId, k.wrapped, k.createdAt] }));
  return {
    dataKeys: async () => (await d.all(LIST_DATA_KEYS)).map(toDataKey),
    async addDataKeys(rows) {
      await d.transact(insert(rows));
    },
    async rewrapDataKeys(rows) {
      await d.transact(
        rows.map((k) => ({ sql: REWRAP_DATA_KEY, params: [k.kekId, k.wrapped, k.id] })),
        (results) =>
          results.forEach((r, i) => {
            const id = rows[i]?.id ?? "?";
            if (r.changes !== 1) throw missingDataKey(id);
          }),
      );
    },
    async replaceDataKeys(rows) {
      await d.transact([{ sql: DELETE_DATA_KEYS, params: [] }, ...insert(rows)]);
    },
  };
}
