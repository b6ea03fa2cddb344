/**
 * Idempotency keys of control commands on Postgres (ports/idempotency-keys.ts); expiry judged by
 * the database's clock.
 */
import type { IdempotencyKeys } from "../ports/idempotency-keys.js";
import { toIdempotency } from "../rows.js";
import { POSTGRES_DIALECT as SQL } from "../sql/dialect.js";
import * as reads from "../sql/reads.js";
import type { PostgresConnection } from "./connection.js";
import type {
  IdempotencyRow,
} from "../types.js";

export function postgresIdempotencyKeys(pg: PostgresConnection): IdempotencyKeys {
  return {
    async idempotencyKey(verb: string, scope: string, key: string): Promise<IdempotencyRow | undefined> {
      const q = reads.liveIdempotencyKey(SQL, verb, scope, key, Date.now());
      const [r] = await pg.query(SQL.text(q.sql), q.params);
      return r ? toIdempotency(r) : undefined;
    },
    async pruneIdempotencyKeys(): Promise<number> {
      const [r] = await pg.query("WITH d AS (DELETE FROM idempotency_keys WHERE expires_at <= stead_now_ms() RETURNING 1) SELECT count(*)::int AS n FROM d");
      return Number(r?.n ?? 0);
    },
  };
}
