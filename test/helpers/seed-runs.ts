/**
 * Many runs written straight into a migrated store's `runs` table, in a few large transactions,
 * for the listing's query-plan test and benchmark. One deterministic shape for both dialects, so
 * figures compare: run i is created at T0 + 10·i ms (ids time-ordered, as Stead's are), with
 *   status     half completed, the rest failed / waiting / pending / held / running;
 *   definition one of 20;  a session for 1 run in 10 (4 sessions);  a parent for 1 in 5 (4 parents);
 *   (few sessions and parents, so that each is many pages long: a listing by one is a walk, not a sort)
 *   updated_at created_at + up to 100 s, scattered.
 * The rows are valid runs as far as a listing reads them; no journal, events or waits.
 */
import type Database from "better-sqlite3";
import type pg from "pg";

export const SEED_T0 = 1_700_000_000_000;

const STATUS_SQL = "(ARRAY['completed','completed','completed','completed','completed','failed','waiting','pending','held','running'])[1 + i % 10]";
const STATUSES = ["completed", "completed", "completed", "completed", "completed", "failed", "waiting", "pending", "held", "running"] as const;

const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");

/** Run i's id (the same text `seedPostgres` writes). */
export function seedId(i: number): string {
  return `run_${hex(SEED_T0 + 10 * i, 12)}${hex(i, 8)}`;
}

export function seedSqlite(db: Database.Database, count: number, batch = 100_000): void {
  const insert = db.prepare(
    `INSERT INTO runs (id, definition, module, fingerprint, status, input, parent_id, session_id, turn, created_at, updated_at)
     VALUES (?, ?, NULL, 'fp', ?, '{}', ?, ?, ?, ?, ?)`,
  );
  const some = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const created = SEED_T0 + 10 * i;
      insert.run(
        seedId(i),
        `def-${i % 20}`,
        STATUSES[i % 10],
        i % 5 === 1 ? `parent-${i % 4}` : null,
        i % 10 === 0 ? `s-${i % 4}` : null,
        i % 10 === 0 ? i : null,
        created,
        created + ((i * 7919) % 100_000),
      );
    }
  });
  for (let from = 0; from < count; from += batch) some(from, Math.min(count, from + batch));
}

export async function seedPostgres(c: pg.Client, count: number, batch = 250_000): Promise<void> {
  for (let from = 0; from < count; from += batch) {
    await c.query(
      `INSERT INTO runs (id, definition, module, fingerprint, status, input, parent_id, session_id, turn, created_at, updated_at)
       SELECT 'run_' || lpad(to_hex($3::bigint + 10 * i), 12, '0') || lpad(to_hex(i), 8, '0'), 'def-' || (i % 20), NULL, 'fp', ${STATUS_SQL}, '{}',
              CASE WHEN i % 5 = 1 THEN 'parent-' || (i % 4) END, CASE WHEN i % 10 = 0 THEN 's-' || (i % 4) END, CASE WHEN i % 10 = 0 THEN i END,
              $3::bigint + 10 * i, $3::bigint + 10 * i + (i::bigint * 7919) % 100000
       FROM generate_series($1::bigint, $2::bigint - 1) AS i`,
      [from, Math.min(count, from + batch), SEED_T0],
    );
  }
  await c.query("ANALYZE runs");
}
