/** Checkpoint metadata beside a step's journal row, through every write path (`Commits`). */
import type { Mutation, StepWrite, Store } from "../types.js";
import { DEF_A, LEASE, owner, newRun, step, fenced } from "./fixtures.js";
import type { Harness } from "./harness.js";
import type { SuiteClock } from "./lease-clock.js";
import type { ConformanceTestApi } from "./test-api.js";

export function describeCheckpoints(api: ConformanceTestApi, h: Harness): void {
  const { describe, it, expect, beforeEach } = api;
  const { created, claimed, commitOne, snapshot } = h;
  describe("checkpoint metadata", () => {
    let store: Store;
    let clock: SuiteClock;
    beforeEach(() => {
      store = h.store;
      clock = h.clock;
    });

    const cp = (v: string) => JSON.stringify({ commit: v, branch: "main" });
    const checkpoints = async (runId: string) => (await store.journal(runId)).map((s) => [s.seq, s.status, s.checkpoint]);

    // The single-step shape is the one stores may give a path of its own (see "guarded mutations").
    it("reads back with its step, written through the single-step shape and through a generic unit; each write of a step sets it to its own value", async () => {
      await created("r1");
      const fence = await claimed("r1", "w1", clock.now());
      const single = (st: StepWrite) => commitOne(store, [fenced("r1", fence, "w1", { steps: [st], run: { lostClaims: 0 }, events: [{ type: "step.completed" }] })]);
      const generic = (st: StepWrite) => commitOne(store, [fenced("r1", fence, "w1", { steps: [st], run: { pauseRequested: false } }), { runId: "r1", events: [{ type: "x" }] }]);
      const intent = (seq: number, over: Partial<StepWrite> = {}) => step(seq, `e${seq}`, { kind: "effect", status: "intent", output: null, completedAt: null, ...over });
      const done = (seq: number, over: Partial<StepWrite> = {}) => step(seq, `e${seq}`, { kind: "effect", ...over });

      expect(await single(intent(0, { checkpoint: cp("a0") }))).toEqual({ ok: true, pauseRequested: false });
      expect(await generic(intent(1, { checkpoint: cp("a1") }))).toEqual({ ok: true, pauseRequested: false });
      expect(await single(step(2, "plain"))).toMatchObject({ ok: true });
      expect(await checkpoints("r1")).toEqual([[0, "intent", cp("a0")], [1, "intent", cp("a1")], [2, "completed", null]]);
      expect((await store.journal("r1"))[0]).toEqual({ ...intent(0), runId: "r1", error: null, checkpoint: cp("a0") });

      // A later write of the same step takes its own value: a new one replaces, an absent one clears.
      expect(await single(done(0, { checkpoint: cp("b0") }))).toMatchObject({ ok: true });
      expect(await generic(done(1))).toMatchObject({ ok: true });
      expect(await checkpoints("r1")).toEqual([[0, "completed", cp("b0")], [1, "completed", null], [2, "completed", null]]);
      expect(await generic(done(1, { checkpoint: cp("b1") }))).toMatchObject({ ok: true });
      expect(await single(done(0))).toMatchObject({ ok: true });
      expect(await single(done(2, { checkpoint: null }))).toMatchObject({ ok: true });
      expect(await checkpoints("r1")).toEqual([[0, "completed", null], [1, "completed", cp("b1")], [2, "completed", null]]);

      // Several steps in one single-step-shaped write each keep their own.
      expect(await commitOne(store, [fenced("r1", fence, "w1", { steps: [done(3, { checkpoint: cp("c3") }), done(4)] })])).toMatchObject({ ok: true });
      expect((await checkpoints("r1")).slice(3)).toEqual([[3, "completed", cp("c3")], [4, "completed", null]]);
    });

    it("travels with a new run's journal (createRun and newRuns), comes back with a claim, and survives the resolution of a wait", async () => {
      await created("fork", { journal: [step(0, "a", { checkpoint: cp("f0") }), step(1, "b")] });
      expect(await checkpoints("fork")).toEqual([[0, "completed", cp("f0")], [1, "completed", null]]);
      const [claim] = await store.claim({ owner: owner("w1"), definitions: [DEF_A], limit: 1, leaseMs: LEASE, now: clock.now(), runIds: ["fork"] });
      expect(claim?.journal.map((s) => s.checkpoint)).toEqual([cp("f0"), null]);

      await created("p");
      expect(await commitOne(store, [{ runId: "p", newRuns: [newRun("p.kid", { parentId: "p", journal: [step(0, "k", { checkpoint: cp("k0") })] })] }])).toMatchObject({ ok: true });
      expect(await checkpoints("p.kid")).toEqual([[0, "completed", cp("k0")]]);

      await commitOne(store, [{ runId: "p", steps: [step(0, "ok", { kind: "approval", status: "waiting", output: null, completedAt: null, checkpoint: cp("w0") })], waits: [{ name: "ok", kind: "approval", seq: 0 }] }]);
      expect(await commitOne(store, [{ runId: "p", expect: { openWait: "ok" }, resolveWaits: [{ name: "ok", seq: 0, status: "resolved", result: "true" }] }])).toMatchObject({ ok: true });
      expect(await checkpoints("p")).toEqual([[0, "completed", cp("w0")]]);
    });

    it("a write refused by the fence leaves nothing, through either shape, alone or in a batch", async () => {
      await created("r1");
      await created("r2");
      const fence = await claimed("r1", "w1", clock.now());
      await commitOne(store, [fenced("r1", fence, "w1", { steps: [step(0, "s0", { checkpoint: cp("kept") })] })]);
      const before = await snapshot(store, "r1");
      const late = [step(0, "s0", { checkpoint: cp("late") }), step(1, "s1", { checkpoint: cp("late") })];
      const refusals: Mutation[][] = [
        [fenced("r1", fence + 1, "w1", { steps: late, run: { lostClaims: 0 }, events: [{ type: "step.completed" }] })],
        [fenced("r1", fence, "w2", { steps: late })],
        [fenced("r1", fence - 1, "w1", { steps: late, run: { pauseRequested: false }, events: [{ type: "late" }] })],
        [fenced("r1", fence, "w2", { steps: late }), { runId: "r2", steps: [step(1, "leak", { checkpoint: cp("leak") })] }],
      ];
      for (const unit of refusals) expect(await commitOne(store, unit)).toMatchObject({ ok: false, reason: "lease", runId: "r1" });
      const batch = await store.commit([[fenced("r1", fence + 1, "w1", { steps: late })], [{ runId: "r2", steps: [step(0, "r2", { checkpoint: cp("r2") })] }]]);
      expect(batch.map((r) => r.ok)).toEqual([false, true]);
      expect(await snapshot(store, "r1")).toEqual(before);
      expect(await checkpoints("r1")).toEqual([[0, "completed", cp("kept")]]);
      expect(await checkpoints("r2")).toEqual([[0, "completed", cp("r2")]]);
    });
  });
}
