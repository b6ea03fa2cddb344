/** An encrypted store's wrapped data keys on SQLite (ports/data-keys.ts): sql/data-keys.ts's statements. */
import { missingDataKey } from "../faults.js";
import type { DataKeys } from "../ports/data-keys.js";
import { toDataKey } from "../rows.js";
import * as dataKeySql from "../sql/data-keys.js";
import type { SqliteConnection } from "./connection.js";

type Raw = Record<string, unknown>;

export function sqliteDataKeys(c: SqliteConnection): DataKeys {
  /** `fn` in one IMMEDIATE transaction, as a write (a refusal it throws rejects). */
  const inWrite = (fn: () => void): Promise<void> => c.write(() => c.db.transaction(fn).immediate());
  return {
    dataKeys: () => c.read(() => (c.stmt(dataKeySql.LIST_DATA_KEYS).all() as Raw[]).map(toDataKey)),
    addDataKeys: (rows) =>
      inWrite(() => {
        for (const k of rows) c.stmt(dataKeySql.INSERT_DATA_KEY).run(k.id, k.kekId, k.wrapped, k.createdAt);
      }),
    rewrapDataKeys: (rows) =>
      inWrite(() => {
        for (const k of rows) if (c.stmt(dataKeySql.REWRAP_DATA_KEY).run(k.kekId, k.wrapped, k.id).changes !== 1) throw missingDataKey(k.id);
      }),
    replaceDataKeys: (rows) =>
      inWrite(() => {
        c.stmt(dataKeySql.DELETE_DATA_KEYS).run();
        for (const k of rows) c.stmt(dataKeySql.INSERT_DATA_KEY).run(k.id, k.kekId, k.wrapped, k.createdAt);
      }),
  };
}
