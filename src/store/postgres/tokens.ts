/** Access tokens on Postgres (ports/tokens.ts): the writes (a transaction each); reads are sql/token-reads.ts. */
import { tokenNameTaken } from "../faults.js";
import type { TokenStore } from "../ports/tokens.js";
import { toTokenRecord } from "../rows.js";
import { tokenReads } from "../sql/token-reads.js";
import { POSTGRES_DIALECT as SQL } from "../sql/dialect.js";
import * as tokenSql from "../sql/tokens.js";
import { postgresDriver, type PostgresConnection } from "./connection.js";

type Raw = Record<string, unknown>;

export function postgresTokens(pg: PostgresConnection): TokenStore {
  return {
    async createToken(t) {
      const row = await pg.transaction(async (c) => {
        await c.query(SQL.text(tokenSql.INSERT_TOKEN), [t.id, t.name, t.role, t.hash, t.createdAt, t.createdBy]);
        return ((await c.query(SQL.text(tokenSql.TOKEN_BY_HASH), [t.hash])).rows as Raw[])[0];
      });
      if (!row || !tokenSql.isWriteOf(row, t)) throw tokenNameTaken(t.name);
      return toTokenRecord(row);
    },
    ...tokenReads(postgresDriver(pg)),
    async revokeToken(name, by, at) {
      // In a transaction: a COMMIT whose reply is lost is read back, not retried into "not found".
      const [r] = await pg.transaction(async (c) => (await c.query(SQL.text(tokenSql.REVOKE_TOKEN), [at, by, name])).rows as Raw[]);
      return r ? toTokenRecord(r) : undefined;
    },
    async touchToken(id, at, minIntervalMs) {
      const rows = await pg.query(`${SQL.text(tokenSql.TOUCH_TOKEN)} RETURNING 1 AS touched`, [at, id, at - minIntervalMs]);
      return rows.length > 0;
    },
  };
}
