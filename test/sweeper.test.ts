/**
 * The sweeper's wake-ups on a real store: timer waits and quota parks both resolve once due, with
 * the same result shape, and each reports its own kind.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { SqliteStore } from "../src/store/sqlite/index.js";
import type { WaitKind } from "../src/store/types.js";
import { wakeDueTimers } from "../src/worker/sweeper.js";
import { openTempSqliteStore } from "./helpers/temp-store.js";

describe("sweeper: wakeDueTimers", () => {
  let store: SqliteStore;
  let opened: { cleanup(): Promise<void> } | undefined;

  afterEach(async () => {
    await opened?.cleanup();
    opened = undefined;
  });

  /** A waiting run parked on one wait of `kind` due at `wakeAt`, its wait step at seq 0. */
  async function parked(runId: string, kind: WaitKind, wakeAt: number): Promise<void> {
    await store.createRun({ id: runId, definition: "d", module: null, fingerprint: null, input: "null", createdAt: 1 }, []);
    const [r] = await store.commit([
      [{ runId, run: { status: "waiting" }, steps: [{ seq: 0, stepId: "park", kind: kind === "quota" ? "quota" : "sleep", status: "waiting", attempt: 1, startedAt: 1 }], waits: [{ name: "park", kind, seq: 0, wakeAt }] }],
    ]);
    expect(r).toMatchObject({ ok: true });
  }

  it("wakes due timer and quota waits alike, reports each one's kind, and leaves future ones parked", async () => {
    const o = await openTempSqliteStore();
    opened = o;
    store = o.store;
    const now = 1_000_000;
    await parked("quota-due", "quota", now - 10);
    await parked("timer-due", "timer", now - 20);
    await parked("quota-later", "quota", now + 60_000);

    expect(await wakeDueTimers(store, now)).toBe(2);

    for (const [runId, kind, wakeAt] of [["quota-due", "quota", now - 10], ["timer-due", "timer", now - 20]] as const) {
      expect(await store.getRun(runId)).toMatchObject({ status: "pending" });
      const result = JSON.stringify({ wakeAt, firedAt: now });
      expect(await store.waits(runId)).toEqual([expect.objectContaining({ kind, status: "resolved", result, resolvedBy: kind })]);
      expect(await store.journal(runId)).toEqual([expect.objectContaining({ stepId: "park", status: "completed", output: result })]);
      const resolved = (await store.events({ runId })).filter((e) => e.type === "wait.resolved");
      expect(resolved.map((e) => JSON.parse(e.data) as unknown)).toEqual([{ wait: "park", kind, wakeAt }]);
    }
    expect(await store.getRun("quota-later")).toMatchObject({ status: "waiting" });
    expect(await store.waits("quota-later")).toEqual([expect.objectContaining({ status: "open" })]);
    expect(await wakeDueTimers(store, now)).toBe(0);
  });
});
