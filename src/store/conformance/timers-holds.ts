/** Due timers, holds, and kinds a store does not list (`RunReads`). */
import type { Mutation, StepKind, Store, WaitKind } from "../types.js";
import { step } from "./fixtures.js";
import type { Harness } from "./harness.js";
import type { ConformanceTestApi } from "./test-api.js";

export function describeTimersAndHolds(api: ConformanceTestApi, h: Harness): void {
  const { describe, it, expect, beforeEach } = api;
  const { created, commitOne } = h;
  describe("timers and holds", () => {
    let store: Store;
    beforeEach(() => {
      store = h.store;
    });

    it("dueTimers returns open timer waits due at or before now, up to the limit", async () => {
      const t = Date.now();
      for (const id of ["due1", "due2", "later", "approval", "resolved"]) await created(id);
      const timer = (runId: string, wakeAt: number): Mutation => ({ runId, waits: [{ name: "nap", kind: "timer", seq: 0, wakeAt }] });
      await store.commit([[timer("due1", t - 10)], [timer("due2", t)], [timer("later", t + 60_000)], [timer("resolved", t - 50)]]);
      await commitOne(store, [{ runId: "approval", waits: [{ name: "ok", kind: "approval", seq: 0 }] }]);
      await commitOne(store, [{ runId: "resolved", resolveWaits: [{ name: "nap", seq: 0, status: "resolved", result: "{}" }] }]);
      const due = await store.dueTimers(t, 100);
      expect(due.map((w) => w.runId).sort()).toEqual(["due1", "due2"]);
      expect(due.find((w) => w.runId === "due1")).toMatchObject({ name: "nap", kind: "timer", status: "open", wakeAt: t - 10 });
      expect(await store.dueTimers(t, 1)).toHaveLength(1);
      expect(await store.dueTimers(t - 1_000, 100)).toEqual([]);
    });

    it("holds() filters by run and status", async () => {
      await created("r1");
      await created("r2");
      await commitOne(store, [{ runId: "r1", holds: [{ kind: "process_failed", reason: "a", details: "{}" }, { kind: "storage", reason: "b", details: "{}" }] }]);
      await commitOne(store, [{ runId: "r2", holds: [{ kind: "nondeterminism", reason: "c", details: "{}" }] }]);
      const r1 = await store.holds({ runId: "r1" });
      expect(r1.map((h) => h.reason).sort()).toEqual(["a", "b"]);
      await commitOne(store, [{ runId: "r1", releaseHolds: [{ id: r1.find((h) => h.reason === "a")?.id ?? -1, choice: "retry" }] }]);
      expect((await store.holds()).map((h) => h.reason).sort()).toEqual(["a", "b", "c"]);
      expect((await store.holds({ status: "open" })).map((h) => h.reason).sort()).toEqual(["b", "c"]);
      expect((await store.holds({ status: "released" })).map((h) => h.reason)).toEqual(["a"]);
      expect((await store.holds({ runId: "r1", status: "open" })).map((h) => h.reason)).toEqual(["b"]);
      expect(await store.holds({ runId: "r3" })).toEqual([]);
    });

    it("dueTimers also returns due quota waits, earliest first, and not future ones", async () => {
      const t = Date.now();
      for (const id of ["q-due", "q-later", "q-resolved", "timer-due"]) await created(id);
      const wake = (runId: string, kind: WaitKind, wakeAt: number): Mutation => ({ runId, waits: [{ name: `${kind}-1`, kind, seq: 0, wakeAt }] });
      await store.commit([[wake("q-due", "quota", t - 5)], [wake("q-later", "quota", t + 60_000)], [wake("q-resolved", "quota", t - 50)], [wake("timer-due", "timer", t - 20)]]);
      await commitOne(store, [{ runId: "q-resolved", resolveWaits: [{ name: "quota-1", seq: 0, status: "resolved", result: "{}" }] }]);
      const due = await store.dueTimers(t, 100);
      expect(due.map((w) => [w.runId, w.kind])).toEqual([
        ["timer-due", "timer"],
        ["q-due", "quota"],
      ]);
      expect(due[1]).toMatchObject({ name: "quota-1", status: "open", wakeAt: t - 5 });
      expect((await store.dueTimers(t + 60_000, 100)).map((w) => w.runId)).toEqual(["timer-due", "q-due", "q-later"]);
    });

    it("keeps step and wait kinds as written, including ones it does not list", async () => {
      const kinds = ["model", "tool", "quota", "from-a-newer-stead"] as StepKind[];
      await created("k1", { journal: kinds.map((kind, i) => step(i, `s${i}`, { kind })) });
      expect((await store.journal("k1")).map((s) => s.kind)).toEqual(kinds);
      await commitOne(store, [{ runId: "k1", waits: [{ name: "w", kind: "from-a-newer-stead" as WaitKind, seq: 9, wakeAt: null }] }]);
      expect((await store.waits("k1")).map((w) => w.kind)).toEqual(["from-a-newer-stead"]);
    });
  });
}
