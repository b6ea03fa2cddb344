/** Access tokens (ports/tokens.ts), written once for every SQL store on its driver: sql/tokens.ts's statements. */
import { tokenNameTaken } from "../faults.js";
import type { TokenStore } from "../ports/tokens.js";
import { toToken, toTokenRecord } from "../rows.js";
import type { SqlDriver } from "./driver.js";
import { INSERT_TOKEN, isWriteOf, LIST_TOKENS, REVOKE_TOKEN, TOKEN_BY_HASH, TOUCH_TOKEN } from "./tokens.js";

export function sqlTokens(d: SqlDriver): TokenStore {
  return {
    async createToken(t) {
      // An active token of the same name makes the insert a no-op: the row read back is the other one.
      const [, read] = await d.transact(
        [
          { sql: INSERT_TOKEN, params: [t.id, t.name, t.role, t.hash, t.createdAt, t.createdBy] },
          { sql: TOKEN_BY_HASH, params: [t.hash] },
        ],
        ([, r]) => {
          const row = r?.rows[0];
          if (!row || !isWriteOf(row, t)) throw tokenNameTaken(t.name);
        },
      );
      const row = read?.rows[0];
      if (!row) throw tokenNameTaken(t.name);
      return toTokenRecord(row);
    },
    listTokens: async () => (await d.all(LIST_TOKENS)).map(toTokenRecord),
    async revokeToken(name, by, at) {
      // In a transaction: a COMMIT whose reply is lost is read back, not retried into "not found".
      const [r] = await d.transact([{ sql: REVOKE_TOKEN, params: [at, by, name] }]);
      const row = r?.rows[0];
      return row ? toTokenRecord(row) : undefined;
    },
    async findTokenByHash(hash) {
      const [r] = await d.all(TOKEN_BY_HASH, [hash]);
      return r ? toToken(r) : undefined;
    },
    async touchToken(id, at, minIntervalMs) {
      // Idempotent (the same time, at most once an interval): one statement on its own.
      return (await d.run({ sql: `${TOUCH_TOKEN} RETURNING id`, params: [at, id, at - minIntervalMs] })).length > 0;
    },
  };
}
