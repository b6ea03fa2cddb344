/**
 * A batch commit takes its runs' row locks in id order, whatever order its units come in, so a
 * writer that locks the same runs in id order never deadlocks against it. Seen from that writer's
 * own connection: with the store waiting on run A, it locks B and then A's holder commits; had the
 * store locked B first (its units' order), the writer's lock of B would be a deadlock, and the
 * writer's short deadlock_timeout makes it the one Postgres aborts.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresStore } from "../src/store/postgres/index.js";
import { newRun } from "../src/store/conformance/fixtures.js";
import { waitUntil } from "./helpers/waiting.js";
import { freshDatabase, type TestDatabase } from "./setup/postgres.js";

describe("Postgres batch commit lock order", () => {
  let db: TestDatabase;
  let store: PostgresStore;

  beforeAll(async () => {
    db = await freshDatabase("lock-order");
    store = new PostgresStore({ connectionString: db.url, poolSize: 4 });
    await store.migrate();
    for (const r of ["run-a", "run-b"]) await store.createRun(newRun(r), [{ type: "run.created" }]);
  });

  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });

  it("a batch whose units name run B before run A takes A's lock first: a writer locking A then B is not deadlocked", async () => {
    const writer = new pg.Client({ connectionString: db.url });
    writer.on("error", () => undefined);
    await writer.connect();
    try {
      await writer.query("SET deadlock_timeout = '20ms'");
      await writer.query("BEGIN");
      await writer.query("SELECT 1 FROM runs WHERE id = 'run-a' FOR UPDATE");

      const batch = store.commit([
        [{ runId: "run-b", events: [{ type: "batched", data: { n: 1 } }] }],
        [{ runId: "run-a", events: [{ type: "batched", data: { n: 2 } }] }],
      ]);
      batch.catch(() => undefined);
      const waiting = async () =>
        (
          await writer.query<{ n: string }>(
            "SELECT count(*)::text AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'",
          )
        ).rows[0]?.n === "1";
      await waitUntil("the store's commit to wait on a row lock", waiting, { timeoutMs: 15_000 });

      await writer.query("SELECT 1 FROM runs WHERE id = 'run-b' FOR UPDATE");
      await writer.query("INSERT INTO events (run_id, type, at, data) VALUES ('run-b', 'raw', 0, '{}')");
      await writer.query("COMMIT");

      expect((await batch).map((r) => r.ok)).toEqual([true, true]);
      const rows = (await writer.query<{ run_id: string; type: string }>("SELECT run_id, type FROM events WHERE type IN ('batched', 'raw') ORDER BY seq")).rows;
      expect(rows).toEqual([
        { run_id: "run-b", type: "raw" },
        { run_id: "run-a", type: "batched" },
        { run_id: "run-b", type: "batched" },
      ]);
    } finally {
      await writer.end();
    }
  });
});
