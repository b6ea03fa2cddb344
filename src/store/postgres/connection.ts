import type pg from "pg";
import { POSTGRES_DIALECT } from "../sql/dialect.js";
import type { SqlDriver } from "../sql/driver.js";

type Raw = Record<string, unknown>;

/**
 * What a port's statements need of a Postgres store, and all they get: each port file (claims.ts,
 * …) takes this, not the store. Both retry through connection faults for up to the store's
 * `faultRetryMs`; `fn` must only issue SQL, since it may run again.
 */
export interface PostgresConnection {
  /** One statement (`$1` placeholders) on a pooled connection. */
  query(sql: string, params?: unknown[]): Promise<Raw[]>;
  /** One write transaction; its value once the COMMIT is known to be durable. */
  transaction<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T>;
  /** Reads from one snapshot (a read-only REPEATABLE READ transaction). */
  snapshot<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T>;
}

/** The narrow driver (sql/driver.ts) over `pg`: shared statements numbered, through its fault retries. */
export function postgresDriver(pg: PostgresConnection): SqlDriver {
  return {
    dialect: POSTGRES_DIALECT,
    all: (sql, params = []) => pg.query(POSTGRES_DIALECT.text(sql), [...params]),
    run: (s) => pg.query(POSTGRES_DIALECT.text(s.sql), s.params),
    // Retried whole through connection faults, as every transaction of the connection is: the
    // batch and its check only issue SQL and read results.
    transact: (statements, check) =>
      pg.transaction(async (client) => {
        const results = [];
        for (const s of statements) {
          const r = await client.query(POSTGRES_DIALECT.text(s.sql), s.params);
          results.push({ rows: r.rows as Record<string, unknown>[], changes: r.rowCount ?? 0 });
        }
        check?.(results);
        return results;
      }),
  };
}
