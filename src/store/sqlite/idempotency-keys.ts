/**
 * Idempotency keys of control commands on SQLite (ports/idempotency-keys.ts); recorded inside the
 * command's own write, read here.
 */
import type { IdempotencyKeys } from "../ports/idempotency-keys.js";
import type {
  IdempotencyRow,
} from "../types.js";
import { toIdempotency } from "../rows.js";
import type { SqliteConnection } from "./connection.js";
import { SQLITE_DIALECT as SQL } from "../sql/dialect.js";
import * as reads from "../sql/reads.js";

type Raw = Record<string, unknown>;

export function sqliteIdempotencyKeys(c: SqliteConnection): IdempotencyKeys {
  return {
    idempotencyKey(verb: string, scope: string, key: string): Promise<IdempotencyRow | undefined> {
      return c.read(() => {
        const q = reads.liveIdempotencyKey(SQL, verb, scope, key, Date.now());
        const r = c.stmt(q.sql).get(...q.params) as Raw | undefined;
        return r ? toIdempotency(r) : undefined;
      });
    },
    async pruneIdempotencyKeys(): Promise<number> {
      return Promise.resolve(c.written(() => c.stmt("DELETE FROM idempotency_keys WHERE expires_at <= ?").run(Date.now()).changes));
    },
  };
}
