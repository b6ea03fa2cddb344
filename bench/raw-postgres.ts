import pg from "pg";
import { stepResult } from "./report.js";

/**
 * The Postgres reference: what one durable commit per step costs with no runtime at all. One `pg`
 * client, a plain table with a serial key, one autocommit INSERT of a ~1 KB JSON text row per step
 * through a prepared statement (as the SQLite reference uses one), on the server's default
 * durability (synchronous_commit=on, fsync=on).
 *
 * It must live in a database of its own: a Stead store refuses a database holding other tables.
 */
export async function rawPostgresSequential(url: string, rows: number): Promise<{ usPerCommit: number }> {
  const client = new pg.Client({ connectionString: url, application_name: "stead-bench-raw" });
  client.on("error", () => undefined);
  await client.connect();
  try {
    await client.query("DROP TABLE IF EXISTS results; CREATE TABLE results (id BIGSERIAL PRIMARY KEY, run_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL)");
    const insert = (i: number) => client.query({ name: "stead-bench-raw-insert", text: "INSERT INTO results (run_id, seq, body) VALUES ($1, $2, $3)", values: ["raw", i, JSON.stringify(stepResult(i))] });
    const t0 = performance.now();
    for (let i = 0; i < rows; i++) await insert(i);
    const ms = performance.now() - t0;
    const n = Number((await client.query<{ n: string }>("SELECT count(*) AS n FROM results")).rows[0]?.n);
    if (n !== rows) throw new Error(`raw Postgres reference: ${n} rows written, expected ${rows}`);
    return { usPerCommit: (ms * 1000) / rows };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The Postgres W2 reference: `clients` connections, each inserting `rows` ~1 KB rows one
 * autocommit INSERT at a time, all at once; rows per second over all of them. What the same server
 * commits with plain clients, on the same durability.
 */
export async function rawPostgresConcurrent(url: string, clients: number, rows: number): Promise<number> {
  const setup = new pg.Client({ connectionString: url, application_name: "stead-bench-raw" });
  setup.on("error", () => undefined);
  await setup.connect();
  try {
    await setup.query("DROP TABLE IF EXISTS results; CREATE TABLE results (id BIGSERIAL PRIMARY KEY, run_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL)");
    const conns = await Promise.all(
      Array.from({ length: clients }, async () => {
        const c = new pg.Client({ connectionString: url, application_name: "stead-bench-raw" });
        c.on("error", () => undefined);
        await c.connect();
        return c;
      }),
    );
    try {
      const t0 = performance.now();
      await Promise.all(
        conns.map(async (c, k) => {
          for (let i = 0; i < rows; i++) {
            await c.query({ name: "stead-bench-raw-insert", text: "INSERT INTO results (run_id, seq, body) VALUES ($1, $2, $3)", values: [`raw-${k}`, i, JSON.stringify(stepResult(i))] });
          }
        }),
      );
      const ms = performance.now() - t0;
      const n = Number((await setup.query<{ n: string }>("SELECT count(*) AS n FROM results")).rows[0]?.n);
      if (n !== clients * rows) throw new Error(`raw Postgres W2 reference: ${n} rows written, expected ${clients * rows}`);
      return (clients * rows * 1000) / ms;
    } finally {
      await Promise.all(conns.map((c) => c.end().catch(() => undefined)));
    }
  } finally {
    await setup.end().catch(() => undefined);
  }
}
