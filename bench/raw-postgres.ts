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
