/** An encrypted store's wrapped data keys on Postgres (ports/data-keys.ts): sql/data-keys.ts's statements. */
import { missingDataKey } from "../faults.js";
import type { DataKeys } from "../ports/data-keys.js";
import { dataKeyReads } from "../sql/data-key-reads.js";
import * as dataKeySql from "../sql/data-keys.js";
import { POSTGRES_DIALECT as SQL } from "../sql/dialect.js";
import { postgresDriver, type PostgresConnection } from "./connection.js";

export function postgresDataKeys(pg: PostgresConnection): DataKeys {
  return {
    ...dataKeyReads(postgresDriver(pg)),
    async addDataKeys(rows) {
      await pg.transaction(async (c) => {
        for (const k of rows) await c.query(SQL.text(dataKeySql.INSERT_DATA_KEY), [k.id, k.kekId, k.wrapped, k.createdAt]);
      });
    },
    async rewrapDataKeys(rows) {
      await pg.transaction(async (c) => {
        for (const k of rows) if ((await c.query(SQL.text(dataKeySql.REWRAP_DATA_KEY), [k.kekId, k.wrapped, k.id])).rowCount !== 1) throw missingDataKey(k.id);
      });
    },
    async replaceDataKeys(rows) {
      await pg.transaction(async (c) => {
        await c.query(SQL.text(dataKeySql.DELETE_DATA_KEYS));
        for (const k of rows) await c.query(SQL.text(dataKeySql.INSERT_DATA_KEY), [k.id, k.kekId, k.wrapped, k.createdAt]);
      });
    },
  };
}
