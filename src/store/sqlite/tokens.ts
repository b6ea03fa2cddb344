/** Access tokens on SQLite (ports/tokens.ts): the writes (one IMMEDIATE transaction each); reads are sql/token-reads.ts. */
import { tokenNameTaken } from "../faults.js";
import type { TokenStore } from "../ports/tokens.js";
import { toTokenRecord } from "../rows.js";
import { tokenReads } from "../sql/token-reads.js";
import * as tokenSql from "../sql/tokens.js";
import { sqliteDriver, type SqliteConnection } from "./connection.js";

type Raw = Record<string, unknown>;

export function sqliteTokens(c: SqliteConnection): TokenStore {
  return {
    async createToken(t) {
      const row = await c.write(() =>
        c.db
          .transaction(() => {
            c.stmt(tokenSql.INSERT_TOKEN).run(t.id, t.name, t.role, t.hash, t.createdAt, t.createdBy);
            const r = c.stmt(tokenSql.TOKEN_BY_HASH).get(t.hash) as Raw | undefined;
            if (!r || !tokenSql.isWriteOf(r, t)) throw tokenNameTaken(t.name);
            return r;
          })
          .immediate(),
      );
      return toTokenRecord(row);
    },
    ...tokenReads(sqliteDriver(c)),
    async revokeToken(name, by, at) {
      const r = await c.write(() => c.stmt(tokenSql.REVOKE_TOKEN).get(at, by, name) as Raw | undefined);
      return r ? toTokenRecord(r) : undefined;
    },
    touchToken: (id, at, minIntervalMs) => c.write(() => c.stmt(tokenSql.TOUCH_TOKEN).run(at, id, at - minIntervalMs).changes > 0),
  };
}
