/** Tallies: the counts a scrape reads (runs by status, open waits and holds by kind) match the rows. */
import type { Harness } from "./harness.js";
import type { ConformanceTestApi } from "./test-api.js";

export function describeTallies(api: ConformanceTestApi, h: Harness): void {
  const { describe, it, expect } = api;
  describe("tallies", () => {
    it("an empty store tallies nothing", async () => {
      expect(await h.store.tally()).toEqual({ runs: {}, openWaits: {}, openHolds: {} });
    });

    it("counts runs by status and only the open waits and holds, by kind", async () => {
      const store = h.store;
      for (const id of ["r-1", "r-2", "r-3", "r-4"]) await h.created(id);
      await h.setStatus("r-2", "completed");
      // r-3 waits for an approval and a timer; r-4 waited for a signal that was answered, then was held.
      expect(await h.commitOne(store, [{ runId: "r-3", run: { status: "waiting" }, waits: [{ name: "ok", kind: "approval", seq: 0 }, { name: "nap", kind: "timer", seq: 1, wakeAt: 1 }] }])).toMatchObject({ ok: true });
      expect(await h.commitOne(store, [{ runId: "r-4", run: { status: "waiting" }, waits: [{ name: "go", kind: "signal", seq: 0 }] }])).toMatchObject({ ok: true });
      expect(await h.commitOne(store, [{ runId: "r-4", expect: { openWait: "go" }, resolveWaits: [{ name: "go", seq: 0, status: "resolved", result: "1", by: null }], run: { status: "held" }, holds: [{ kind: "process_failed", reason: "x", details: "{}" }] }])).toMatchObject({ ok: true });
      expect(await h.commitOne(store, [{ runId: "r-1", holds: [{ kind: "nondeterminism", reason: "y", details: "{}" }] }])).toMatchObject({ ok: true });
      const [released] = await store.holds({ runId: "r-1" });
      expect(await h.commitOne(store, [{ runId: "r-1", releaseHolds: [{ id: released?.id ?? -1, choice: "retry", by: null }] }])).toMatchObject({ ok: true });
      expect(await store.tally()).toEqual({
        runs: { pending: 1, completed: 1, waiting: 1, held: 1 },
        openWaits: { approval: 1, timer: 1 },
        openHolds: { process_failed: 1 },
      });
    });
  });
}
