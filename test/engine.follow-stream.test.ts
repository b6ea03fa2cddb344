/**
 * `stead.follow` reports its run tree's events through the store's event stream, so on Postgres a
 * tree event whose transaction commits after a later-numbered one of another run is still
 * reported, once. The world's account is the events table.
 */
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { createStead, workflow, type EventView } from "../src/index.js";
import { PostgresStore } from "../src/store/postgres/index.js";
import type { Store } from "../src/store/types.js";
import { newRun } from "../src/store/conformance/fixtures.js";
import { FAST_FOLLOW } from "./helpers/temp-store.js";
import { deferred, waitUntil } from "./helpers/waiting.js";
import { freshDatabase } from "./setup/postgres.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The store, with every event read's result recorded (what the follower has read so far). */
function observed(store: Store, read: (runIds: string[]) => void): Store {
  return new Proxy(store, {
    get(target, key) {
      const v = Reflect.get(target, key, target) as unknown;
      if (typeof v !== "function") return v;
      const f = v as (...args: unknown[]) => unknown;
      if (key === "events" || key === "eventsAfter") {
        return async (...args: unknown[]) => {
          const out = (await f.apply(target, args)) as { runId: string }[] | { events: { runId: string }[] };
          read((Array.isArray(out) ? out : out.events).map((e) => e.runId));
          return out;
        };
      }
      return f.bind(target);
    },
  });
}

describe("follow on Postgres", () => {
  it("reports a tree event committed after a later-numbered event it had already read past, once, with every other", async () => {
    const db = await freshDatabase("follow-stream");
    const store = new PostgresStore({ connectionString: db.url });
    cleanups.push(() => db.drop(), () => store.close());
    await store.migrate();
    const readRuns = new Set<string>();
    const stead = createStead({ store: observed(store, (ids) => ids.forEach((id) => readRuns.add(id))) });
    const reached = deferred();
    const gate = deferred();
    const gated = workflow("gated", async (ctx) => {
      await ctx.step("wait", async () => {
        reached.resolve();
        await gate.promise;
        return 1;
      });
      return "done";
    });
    const { id } = await stead.runs.start(gated, null);
    const seen: EventView[] = [];
    const followed = stead.runs.follow(id, [gated], { ...FAST_FOLLOW, onEvent: (e) => void seen.push(e) });
    await reached.promise;

    // A writer of the run's events, slow to commit: its event is numbered before the next one.
    const slow = new pg.Client({ connectionString: db.url });
    await slow.connect();
    cleanups.push(() => slow.end());
    await slow.query("BEGIN");
    await slow.query("SELECT 1 FROM runs WHERE id = $1 FOR UPDATE", [id]);
    await slow.query("INSERT INTO events (run_id, type, at, data) VALUES ($1, 'probe.slow', 0, '{}')", [id]);
    await store.createRun(newRun("other"), [{ type: "run.created" }]);
    await waitUntil("the follower to read the other run's event", () => readRuns.has("other"));
    await slow.query("COMMIT");
    gate.resolve();
    expect((await followed).status).toBe("completed");

    const table = (await store.events({ runId: id })).map((e) => [e.seq, e.type]);
    expect(table.map(([, t]) => t)).toContain("probe.slow");
    expect(seen.map((e) => [e.seq, e.type])).toEqual(table);
  });
});
