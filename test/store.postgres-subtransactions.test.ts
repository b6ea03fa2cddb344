/**
 * A group commit opens a subtransaction only for a unit that can be refused after it has written
 * (a non-optional mutation after its first). Seen by Postgres itself: the store's commit is held on
 * a row lock of its last run, and another connection reads the store backend's subtransaction
 * count (pg_stat_get_backend_subxact) while the earlier units are applied and not yet committed.
 * Past 64 the backend's cache overflows, which slows every other session's snapshots.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresStore } from "../src/store/postgres/index.js";
import { newRun } from "../src/store/conformance/fixtures.js";
import type { Unit } from "../src/store/types.js";
import { waitUntil } from "./helpers/waiting.js";
import { freshDatabase, type TestDatabase } from "./setup/postgres.js";

const RUNS = 80;
const ids = Array.from({ length: RUNS }, (_, i) => `run-${String(i).padStart(3, "0")}`);
const last = ids[RUNS - 1] ?? "";

describe("Postgres group commit subtransactions", () => {
  let db: TestDatabase;
  let store: PostgresStore;
  let observer: pg.Client;

  beforeAll(async () => {
    db = await freshDatabase("subtransactions");
    store = new PostgresStore({ connectionString: db.url, poolSize: 2 });
    await store.migrate();
    for (const id of ids) await store.createRun(newRun(id), [{ type: "run.created" }]);
    observer = new pg.Client({ connectionString: db.url });
    observer.on("error", () => undefined);
    await observer.connect();
  });

  afterAll(async () => {
    await observer?.end();
    await store?.close();
    await db?.drop();
  });

  /** The store backend's subtransactions while `units` are applied up to the last run, held on its lock. */
  async function subtransactionsOf(units: Unit[]): Promise<{ count: number; overflowed: boolean; results: boolean[] }> {
    const holder = new pg.Client({ connectionString: db.url });
    holder.on("error", () => undefined);
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT 1 FROM runs WHERE id = $1 FOR UPDATE", [last]);
      const batch = store.commit(units);
      batch.catch(() => undefined);
      let pid = 0;
      await waitUntil(
        "the store's commit to wait on the held row lock",
        async () => {
          const row = (await observer.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1", [await backendPid(holder)])).rows[0];
          pid = row?.pid ?? 0;
          return pid !== 0;
        },
        { timeoutMs: 15_000 },
      );
      const seen = (
        await observer.query<{ count: number; overflowed: boolean }>(
          `SELECT s.subxact_count AS count, s.subxact_overflowed AS overflowed
           FROM pg_stat_get_backend_idset() AS b(id), LATERAL pg_stat_get_backend_subxact(b.id) AS s
           WHERE pg_stat_get_backend_pid(b.id) = $1`,
          [pid],
        )
      ).rows[0];
      await holder.query("COMMIT");
      const results = (await batch).map((r) => r.ok);
      if (!seen) throw new Error(`backend ${pid} not found in pg_stat_get_backend_idset()`);
      return { count: Number(seen.count), overflowed: seen.overflowed, results };
    } finally {
      await holder.end();
    }
  }

  const backendPid = async (c: pg.Client): Promise<number> => (await c.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid ?? 0;

  it("none for units of one mutation each, nor for optional mutations after the first", async () => {
    const units: Unit[] = ids.map((id, i) =>
      i % 2 === 0
        ? [{ runId: id, events: [{ type: "one", data: { i } }] }]
        : [
            { runId: id, events: [{ type: "first", data: { i } }] },
            { runId: id, optional: true, expect: { status: ["completed"] }, events: [{ type: "refused-optional" }] },
            { runId: id, optional: true, events: [{ type: "optional", data: { i } }] },
          ],
    );
    const seen = await subtransactionsOf(units);
    expect(seen).toEqual({ count: 0, overflowed: false, results: ids.map(() => true) });
    const types = (await observer.query<{ type: string; n: string }>("SELECT type, count(*)::text AS n FROM events WHERE type IN ('one', 'first', 'refused-optional', 'optional') GROUP BY type ORDER BY type")).rows;
    expect(types).toEqual([
      { type: "first", n: String(RUNS / 2) },
      { type: "one", n: String(RUNS / 2) },
      { type: "optional", n: String(RUNS / 2) },
    ]);
  });

  // A block rolled back leaves the cache with its id: the count is of the guarded units that applied.
  it("one for each unit a later mutation can refuse, and the refused ones undone", async () => {
    const units: Unit[] = ids.slice(0, 10).map((id, i) => [
      { runId: id, events: [{ type: "guarded-first", data: { i } }] },
      { runId: id, expect: { status: i % 2 === 0 ? ["pending"] : ["completed"] }, events: [{ type: "guarded-second", data: { i } }] },
    ]);
    units.push([{ runId: last, events: [{ type: "guarded-last" }] }]);
    const seen = await subtransactionsOf(units);
    expect(seen).toEqual({ count: 5, overflowed: false, results: [...ids.slice(0, 10).map((_, i) => i % 2 === 0), true] });
    const rows = (await observer.query<{ run_id: string; type: string }>("SELECT run_id, type FROM events WHERE type LIKE 'guarded-%' ORDER BY run_id, seq")).rows;
    expect(rows).toEqual([
      ...ids.slice(0, 10).flatMap((id, i) => (i % 2 === 0 ? [{ run_id: id, type: "guarded-first" }, { run_id: id, type: "guarded-second" }] : [])),
      { run_id: last, type: "guarded-last" },
    ]);
  });
});
