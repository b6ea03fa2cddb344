/** An encrypted store's wrapped data keys on SQLite (ports/data-keys.ts): sql/data-keys.ts's statements. */
import { missingDataKey } from "../faults.js";
import type { DataKeys } from "../ports/data-keys.js";
import { dataKeyReads } from "../sql/data-key-reads.js";
import * as dataKeySql from "../sql/data-keys.js";
import { sqliteDriver, type SqliteConnection } from "./connection.js";

export function sqliteDataKeys(c: SqliteConnection): DataKeys {
  /** `fn` in one IMMEDIATE transaction, as a write (a refusal it throws rejects). */
  const inWrite = (fn: () => void): Promise<void> => c.write(() => c.db.transaction(fn).immediate());
  return {
    ...dataKeyReads(sqliteDriver(c)),
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
