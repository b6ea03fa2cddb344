/** The preconditions of a unit (a fence, a status, an open wait or hold) and its all-or-nothing (`Commits.commit`). */
import type { Mutation, Store } from "../types.js";
import { DEF_A, LEASE, owner, newRun, step, fenced } from "./fixtures.js";
import type { Harness } from "./harness.js";
import type { SuiteClock } from "./lease-clock.js";
import type { ConformanceTestApi } from "./test-api.js";

export function describeGuardedMutations(api: ConformanceTestApi, h: Harness): void {
  const { describe, it, expect, beforeEach } = api;
  const { created, claimed, commitOne, snapshot } = h;
  describe("guarded mutations", () => {
    let store: Store;
    let clock: SuiteClock;
    beforeEach(() => {
      store = h.store;
      clock = h.clock;
    });

    it("refuses a write with a stale fence or another owner (reason lease) and changes nothing", async () => {
      await created("r1");
      await created("r2");
      expect(await claimed("r1", "w1", clock.now(), owner("w1"), clock.lease)).toBe(1);
      await clock.advance(clock.lease + clock.epsilon);
      const [c2] = await store.claim({ owner: owner("w2"), definitions: [DEF_A], limit: 1, leaseMs: LEASE, now: clock.now(), runIds: ["r1"] });
      expect(c2?.run.fence).toBe(2);
      const before = await snapshot(store, "r1");

      const everything = {
        run: { status: "completed" as const, output: '"late"', releaseLease: true, lostClaims: 0 },
        steps: [step(0, "late-step")],
        waits: [{ name: "w", kind: "approval" as const, seq: 1 }],
        holds: [{ kind: "storage" as const, reason: "x", details: "{}" }],
        newRuns: [newRun("late-child", { parentId: "r1", parentStepId: "k" })],
        events: [{ type: "late.event" }],
      };
      expect(await commitOne(store, [fenced("r1", 1, "w1", everything)])).toMatchObject({ ok: false, reason: "lease", runId: "r1" });
      expect(await commitOne(store, [fenced("r1", 2, "w1", everything)])).toMatchObject({ ok: false, reason: "lease", runId: "r1" });
      expect(await commitOne(store, [fenced("r1", 3, "w2", everything)])).toMatchObject({ ok: false, reason: "lease", runId: "r1" });
      expect(await snapshot(store, "r1")).toEqual(before);
      expect(await store.getRun("late-child")).toBeUndefined();

      expect(await commitOne(store, [fenced("r1", 2, "w2", { steps: [step(0, "ok-step")], events: [{ type: "ok.event" }] })])).toMatchObject({ ok: true });
      expect((await store.journal("r1")).map((s) => s.stepId)).toEqual(["ok-step"]);
    });

    // The shape of almost every write (a step's outcome): stores may give it a path of its own.
    it("refuses a plain step write with a stale fence or another owner, alone in its commit, and changes nothing", async () => {
      await created("r1");
      expect(await claimed("r1", "w1", clock.now(), owner("w1"), clock.lease)).toBe(1);
      await clock.advance(clock.lease + clock.epsilon);
      const [c2] = await store.claim({ owner: owner("w2"), definitions: [DEF_A], limit: 1, leaseMs: LEASE, now: clock.now(), runIds: ["r1"] });
      expect(c2?.run.fence).toBe(2);
      const before = await snapshot(store, "r1");
      const plain = { steps: [step(0, "late-step")], run: { lostClaims: 0 }, events: [{ type: "step.completed" }] };
      expect(await commitOne(store, [fenced("r1", 1, "w1", plain)])).toMatchObject({ ok: false, reason: "lease", runId: "r1", status: "running" });
      expect(await commitOne(store, [fenced("r1", 2, "w1", plain)])).toMatchObject({ ok: false, reason: "lease", runId: "r1" });
      expect(await commitOne(store, [fenced("r1", 1, "w2", plain)])).toMatchObject({ ok: false, reason: "lease", runId: "r1" });
      expect(await commitOne(store, [fenced("missing-run", 1, "w1", plain)])).toMatchObject({ ok: false, reason: "missing", runId: "missing-run" });
      expect(await snapshot(store, "r1")).toEqual(before);
      expect(await commitOne(store, [fenced("r1", 2, "w2", plain)])).toMatchObject({ ok: true, pauseRequested: false });
      expect((await store.journal("r1")).map((s) => [s.stepId, s.status])).toEqual([["late-step", "completed"]]);
      expect((await store.events({ runId: "r1" })).filter((e) => e.type === "step.completed")).toHaveLength(1);
      expect(c2?.run.lostClaims).toBe(1);
      expect((await store.getRun("r1"))?.lostClaims).toBe(0);
    });

    it("refuses a fenced write once the run is no longer running, even with its last fence", async () => {
      const t = clock.now();
      await created("r1");
      await claimed("r1", "w1", t);
      expect(await commitOne(store, [fenced("r1", 1, "w1", { run: { status: "waiting", releaseLease: true } })])).toMatchObject({ ok: true });
      const before = await snapshot(store, "r1");
      expect(await commitOne(store, [fenced("r1", 1, "w1", { steps: [step(0, "x")], events: [{ type: "x" }] })])).toMatchObject({ ok: false, reason: "lease" });
      expect(await snapshot(store, "r1")).toEqual(before);
    });

    it("checks the status precondition, reporting the current status; a missing run is reported as missing", async () => {
      await created("r1");
      const before = await snapshot(store, "r1");
      expect(await commitOne(store, [{ runId: "r1", expect: { status: ["waiting", "paused"] }, run: { status: "cancelled" }, events: [{ type: "x" }] }])).toEqual({
        ok: false,
        reason: "status",
        runId: "r1",
        status: "pending",
      });
      expect(await snapshot(store, "r1")).toEqual(before);
      expect(await commitOne(store, [{ runId: "r1", expect: { status: ["pending"] }, run: { status: "paused" } }])).toMatchObject({ ok: true });
      expect((await store.getRun("r1"))?.status).toBe("paused");
      expect(await commitOne(store, [{ runId: "ghost", run: { status: "paused" } }])).toMatchObject({ ok: false, reason: "missing", runId: "ghost" });
    });

    it("checks the openWait precondition", async () => {
      await created("r1");
      const guarded = (type: string): Mutation => ({ runId: "r1", expect: { openWait: "ok" }, events: [{ type }] });
      expect(await commitOne(store, [guarded("before-open")])).toMatchObject({ ok: false, reason: "wait", runId: "r1" });
      await commitOne(store, [{ runId: "r1", waits: [{ name: "ok", kind: "approval", seq: 0 }] }]);
      expect(await commitOne(store, [guarded("while-open")])).toMatchObject({ ok: true });
      await commitOne(store, [{ runId: "r1", resolveWaits: [{ name: "ok", seq: 0, status: "resolved", result: "true" }] }]);
      expect(await commitOne(store, [guarded("after-resolve")])).toMatchObject({ ok: false, reason: "wait" });
      expect((await store.events({ runId: "r1" })).map((e) => e.type)).toEqual(["run.created", "while-open"]);
    });

    it("checks the openHold precondition, per run", async () => {
      await created("r1");
      await created("r2");
      await commitOne(store, [{ runId: "r1", holds: [{ kind: "nondeterminism", reason: "diverged", details: "{}" }] }]);
      const [hold] = await store.holds({ runId: "r1" });
      if (!hold) throw new Error("no hold written");
      expect(await commitOne(store, [{ runId: "r1", expect: { openHold: hold.id + 1000 }, events: [{ type: "x" }] }])).toMatchObject({ ok: false, reason: "hold" });
      expect(await commitOne(store, [{ runId: "r2", expect: { openHold: hold.id }, events: [{ type: "x" }] }])).toMatchObject({ ok: false, reason: "hold", runId: "r2" });
      expect(await commitOne(store, [{ runId: "r1", expect: { openHold: hold.id }, releaseHolds: [{ id: hold.id, choice: "retry", by: "ann" }] }])).toMatchObject({ ok: true });
      expect(await commitOne(store, [{ runId: "r1", expect: { openHold: hold.id }, events: [{ type: "x" }] }])).toMatchObject({ ok: false, reason: "hold" });
      expect((await store.events()).filter((e) => e.type === "x")).toEqual([]);
    });

    it("skips an optional mutation whose precondition fails without failing its unit", async () => {
      await created("r1");
      await created("r2");
      const r = await commitOne(store, [
        { runId: "r1", steps: [step(0, "kept")], events: [{ type: "kept" }] },
        { runId: "r2", optional: true, expect: { status: ["waiting"] }, run: { status: "pending", output: '"no"' }, steps: [step(0, "skipped")], events: [{ type: "skipped" }] },
        { runId: "ghost", optional: true, events: [{ type: "skipped" }] },
      ]);
      expect(r).toMatchObject({ ok: true });
      expect((await store.journal("r1")).map((s) => s.stepId)).toEqual(["kept"]);
      expect(await store.journal("r2")).toEqual([]);
      expect((await store.getRun("r2"))?.output).toBeNull();
      expect((await store.events()).map((e) => e.type)).not.toContain("skipped");
    });

    it("applies a unit all-or-nothing, while other units of the same commit still apply", async () => {
      for (const id of ["r1", "r2", "r3"]) await created(id);
      const before1 = await snapshot(store, "r1");
      const before2 = await snapshot(store, "r2");
      const results = await store.commit([
        [
          {
            runId: "r1",
            run: { status: "waiting", output: '"x"' },
            steps: [step(0, "s")],
            waits: [{ name: "w", kind: "signal", seq: 1 }],
            holds: [{ kind: "storage", reason: "r", details: "{}" }],
            newRuns: [newRun("r1-child", { parentId: "r1", parentStepId: "k" })],
            events: [{ type: "first" }],
          },
          { runId: "r2", expect: { status: ["held"] }, run: { status: "completed" }, events: [{ type: "second" }] },
        ],
        [{ runId: "r3", run: { output: '"r3"' }, steps: [step(0, "t")], events: [{ type: "third" }] }],
      ]);
      expect(results).toEqual([{ ok: false, reason: "status", runId: "r2", status: "pending" }, { ok: true, pauseRequested: false }]);
      expect(await snapshot(store, "r1")).toEqual(before1);
      expect(await snapshot(store, "r2")).toEqual(before2);
      expect(await store.getRun("r1-child")).toBeUndefined();
      expect((await store.getRun("r3"))?.output).toBe('"r3"');
      expect((await store.journal("r3")).map((s) => s.stepId)).toEqual(["t"]);
      expect((await store.events({ runId: "r3" })).map((e) => e.type)).toEqual(["run.created", "third"]);
    });

    it("undoes what a unit's earlier mutations wrote when a later one is refused, optional ones included; a refused optional mutation between others takes nothing of theirs", async () => {
      for (const id of ["r1", "r2", "r3"]) await created(id);
      const before = [await snapshot(store, "r1"), await snapshot(store, "r2")];
      const results = await store.commit([
        [
          { runId: "r1", optional: true, run: { output: '"undone"' }, steps: [step(0, "undone")], events: [{ type: "undone" }] },
          { runId: "r2", expect: { status: ["held"] }, events: [{ type: "refused" }] },
        ],
        [
          { runId: "r3", steps: [step(0, "first")], events: [{ type: "first" }] },
          { runId: "r2", optional: true, expect: { status: ["waiting"] }, run: { output: '"skipped"' }, events: [{ type: "skipped" }] },
          { runId: "r3", optional: true, run: { output: '"last"' }, steps: [step(1, "last")], events: [{ type: "last" }] },
        ],
      ]);
      expect(results).toEqual([{ ok: false, reason: "status", runId: "r2", status: "pending" }, { ok: true, pauseRequested: false }]);
      expect([await snapshot(store, "r1"), await snapshot(store, "r2")]).toEqual(before);
      expect((await store.journal("r3")).map((s) => s.stepId)).toEqual(["first", "last"]);
      expect((await store.getRun("r3"))?.output).toBe('"last"');
      expect((await store.events({ runId: "r3" })).map((e) => e.type)).toEqual(["run.created", "first", "last"]);
    });

    it("runs beforeCommit once inside the transaction: if it throws, no unit of the batch is applied", async () => {
      await created("r1");
      await created("r2");
      const before = [await snapshot(store, "r1"), await snapshot(store, "r2")];
      let calls = 0;
      const batch = [[{ runId: "r1", steps: [step(0, "a")], events: [{ type: "a" }] }], [{ runId: "r2", run: { status: "paused" as const } }]];
      await expect(
        store.commit(batch, {
          beforeCommit: () => {
            calls++;
            throw new Error("crash between apply and commit");
          },
        }),
      ).rejects.toThrow("crash between apply and commit");
      expect(calls).toBe(1);
      expect([await snapshot(store, "r1"), await snapshot(store, "r2")]).toEqual(before);

      await store.commit(batch, { beforeCommit: () => void calls++ });
      expect(calls).toBe(2);
      expect((await store.journal("r1")).map((s) => s.stepId)).toEqual(["a"]);
      expect((await store.getRun("r2"))?.status).toBe("paused");
    });
  });
}
