/** What each part of a mutation writes (`Commits.commit`). */
import type { Store } from "../types.js";
import { DEF_A, DEF_B, newRun, step, fenced } from "./fixtures.js";
import type { Harness } from "./harness.js";
import type { SuiteClock } from "./lease-clock.js";
import type { ConformanceTestApi } from "./test-api.js";

export function describeWrites(api: ConformanceTestApi, h: Harness): void {
  const { describe, it, expect, beforeEach } = api;
  const { created, claimed, commitOne } = h;
  describe("writes", () => {
    let store: Store;
    let clock: SuiteClock;
    beforeEach(() => {
      store = h.store;
      clock = h.clock;
    });

    it("patches run columns; releaseLease keeps the fence; the unit reports pauseRequested", async () => {
      const t = clock.now();
      await created("r1");
      await claimed("r1", "w1", t);
      expect(await commitOne(store, [{ runId: "r1", expect: { status: ["running"] }, run: { pauseRequested: true } }])).toEqual({ ok: true, pauseRequested: true });
      expect(await commitOne(store, [fenced("r1", 1, "w1", { steps: [step(0, "a")] })])).toEqual({ ok: true, pauseRequested: true });
      const r = await commitOne(store, [
        fenced("r1", 1, "w1", { run: { status: "completed", output: '{"v":1}', error: '{"message":"m"}', fingerprint: "fp-2", lostClaims: 2, pauseRequested: false, releaseLease: true } }),
      ]);
      expect(r).toEqual({ ok: true, pauseRequested: false });
      expect(await store.getRun("r1")).toMatchObject({
        status: "completed",
        output: '{"v":1}',
        error: '{"message":"m"}',
        fingerprint: "fp-2",
        lostClaims: 2,
        pauseRequested: false,
        leaseOwner: null,
        leaseExpiresAt: null,
        fence: 1,
      });
      await commitOne(store, [{ runId: "r1", run: { output: null, fingerprint: null } }]);
      expect(await store.getRun("r1")).toMatchObject({ output: null, fingerprint: null, error: '{"message":"m"}' });
    });

    it("upserts steps by (runId, seq)", async () => {
      await created("r1");
      await created("r2");
      await commitOne(store, [{ runId: "r1", steps: [step(0, "pay", { kind: "effect", status: "intent", output: null, completedAt: null })] }]);
      await commitOne(store, [{ runId: "r2", steps: [step(0, "other")] }]);
      await commitOne(store, [{ runId: "r1", steps: [step(0, "pay", { kind: "effect", status: "completed", attempt: 2, output: '"paid"', completedAt: 9_999 })] }]);
      expect(await store.journal("r1")).toEqual([
        { runId: "r1", seq: 0, stepId: "pay", kind: "effect", status: "completed", attempt: 2, output: '"paid"', error: null, startedAt: 1_000, completedAt: 9_999, checkpoint: null },
      ]);
      expect((await store.journal("r2")).map((s) => s.stepId)).toEqual(["other"]);
    });

    it("deleteStepsFrom removes the journal from a position on, for that run only", async () => {
      await created("r1", { journal: [0, 1, 2, 3].map((i) => step(i, `s${i}`)) });
      await created("r2", { journal: [0, 1, 2, 3].map((i) => step(i, `s${i}`)) });
      expect(await commitOne(store, [{ runId: "r1", deleteStepsFrom: 2 }])).toMatchObject({ ok: true });
      expect((await store.journal("r1")).map((s) => s.stepId)).toEqual(["s0", "s1"]);
      expect(await store.journal("r2")).toHaveLength(4);
    });

    it("opens waits and resolves them; resolving completes the wait's journal step with the result", async () => {
      await created("r1");
      await commitOne(store, [
        {
          runId: "r1",
          steps: [step(0, "a"), step(1, "ok", { kind: "approval", status: "waiting", output: null, completedAt: null }), step(2, "go", { kind: "signal", status: "waiting", output: null, completedAt: null })],
          waits: [
            { name: "ok", kind: "approval", seq: 1, request: '{"q":"ship?"}', requestKind: "tool-call" },
            { name: "go", kind: "signal", seq: 2 },
          ],
        },
      ]);
      const opened = await store.waits("r1");
      expect(opened).toEqual([
        { runId: "r1", name: "ok", kind: "approval", status: "open", seq: 1, request: '{"q":"ship?"}', requestKind: "tool-call", wakeAt: null, result: null, createdAt: expect.any(Number) as number, resolvedAt: null, resolvedBy: null },
        { runId: "r1", name: "go", kind: "signal", status: "open", seq: 2, request: null, requestKind: null, wakeAt: null, result: null, createdAt: expect.any(Number) as number, resolvedAt: null, resolvedBy: null },
      ]);
      expect(
        await commitOne(store, [
          { runId: "r1", expect: { openWait: "ok" }, resolveWaits: [{ name: "ok", seq: 1, status: "resolved", result: '{"approved":true}', by: "ann" }] },
        ]),
      ).toMatchObject({ ok: true });
      const [ok, go] = await store.waits("r1");
      expect(ok).toMatchObject({ status: "resolved", result: '{"approved":true}', resolvedBy: "ann", resolvedAt: expect.any(Number) as number });
      expect(go).toMatchObject({ status: "open", result: null });
      const journal = await store.journal("r1");
      expect(journal[1]).toMatchObject({ stepId: "ok", status: "completed", output: '{"approved":true}', completedAt: expect.any(Number) as number });
      expect(journal[2]).toMatchObject({ stepId: "go", status: "waiting", output: null });
      expect(journal[0]).toMatchObject({ stepId: "a", output: '"a"' });

      await commitOne(store, [{ runId: "r1", resolveWaits: [{ name: "go", status: "cancelled", by: "bob" }] }]);
      expect((await store.waits("r1"))[1]).toMatchObject({ status: "cancelled", resolvedBy: "bob" });
      expect((await store.journal("r1"))[2]?.status).not.toBe("completed");
    });

    it("opens holds and releases them with the choice and who chose", async () => {
      await created("r1");
      await commitOne(store, [{ runId: "r1", holds: [{ kind: "ambiguous_effect", stepId: "pay", seq: 3, reason: "maybe paid", details: '{"k":1}' }] }]);
      const [h] = await store.holds({ runId: "r1" });
      expect(h).toEqual({
        id: expect.any(Number) as number,
        runId: "r1",
        kind: "ambiguous_effect",
        stepId: "pay",
        seq: 3,
        reason: "maybe paid",
        details: '{"k":1}',
        status: "open",
        choice: null,
        createdAt: expect.any(Number) as number,
        releasedAt: null,
        releasedBy: null,
      });
      await commitOne(store, [{ runId: "r1", releaseHolds: [{ id: h?.id ?? -1, choice: "skip", by: "ann" }] }]);
      expect((await store.holds({ runId: "r1" }))[0]).toMatchObject({ status: "released", choice: "skip", releasedBy: "ann", releasedAt: expect.any(Number) as number });
    });

    it("creates new runs in a mutation, as children of the run", async () => {
      await created("p");
      expect(await commitOne(store, [{ runId: "p", newRuns: [newRun("p.kid", { parentId: "p", parentStepId: "kid", definition: DEF_B })] }])).toMatchObject({ ok: true });
      expect(await store.getRun("p.kid")).toMatchObject({ status: "pending", parentId: "p", parentStepId: "kid", definition: DEF_B, fence: 0 });
      expect((await store.listRuns({ parentId: "p" })).runs.map((r) => r.id)).toEqual(["p.kid"]);
    });

    it("a newRuns id that exists is a retry of the same creation: that run is left as it is, journal and workspace included", async () => {
      await created("p");
      await created("old");
      expect(
        await commitOne(store, [{ runId: "p", newRuns: [newRun("old", { parentId: "p", parentStepId: "kid", definition: DEF_B, workspace: "/ws/again", journal: [step(0, "j")] })] }]),
      ).toMatchObject({ ok: true });
      expect(await store.getRun("old")).toMatchObject({ definition: DEF_A, parentId: null, parentStepId: null, workspace: null });
      expect(await store.journal("old")).toEqual([]);
    });

    it("an id given twice in one newRuns creates one run, as its first entry says", async () => {
      await created("p");
      const twice = [
        newRun("kid", { parentId: "p", parentStepId: "first", workspace: "/ws/first", journal: [step(0, "a")] }),
        newRun("kid", { parentId: "p", parentStepId: "second", workspace: "/ws/second", journal: [step(0, "b"), step(1, "c")] }),
      ];
      expect(await commitOne(store, [{ runId: "p", newRuns: twice }])).toMatchObject({ ok: true });
      expect(await store.getRun("kid")).toMatchObject({ parentStepId: "first", workspace: "/ws/first" });
      expect((await store.journal("kid")).map((s) => s.stepId)).toEqual(["a"]);
    });

    it("resolves an open wait once: a second entry for it in the same mutation finds it answered", async () => {
      await created("r1");
      await commitOne(store, [{ runId: "r1", steps: [step(0, "ok", { kind: "approval", status: "waiting", output: null, completedAt: null })], waits: [{ name: "ok", kind: "approval", seq: 0 }] }]);
      const answers = [
        { name: "ok", seq: 0, status: "resolved" as const, result: "1", by: "ann" },
        { name: "ok", status: "cancelled" as const, by: "bob" },
      ];
      expect(await commitOne(store, [{ runId: "r1", resolveWaits: answers }])).toMatchObject({ ok: true });
      expect((await store.waits("r1"))[0]).toMatchObject({ status: "resolved", result: "1", resolvedBy: "ann" });
      expect((await store.journal("r1"))[0]).toMatchObject({ status: "completed", output: "1" });
    });

    it("reopenWaits opens waits a cancellation closed, and only those", async () => {
      await store.createRun(newRun("r1"), []);
      const waits = [
        { name: "ask", kind: "approval" as const, seq: 0 },
        { name: "done", kind: "signal" as const, seq: 1 },
      ];
      expect(await commitOne(store, [{ runId: "r1", waits }])).toMatchObject({ ok: true });
      expect(await commitOne(store, [{ runId: "r1", resolveWaits: [{ name: "ask", status: "cancelled", by: "ann" }, { name: "done", seq: 1, status: "resolved", result: "1", by: "bob" }] }])).toMatchObject({ ok: true });
      expect(await commitOne(store, [{ runId: "r1", reopenWaits: ["ask", "done"] }])).toMatchObject({ ok: true });
      const byName = Object.fromEntries((await store.waits("r1")).map((w) => [w.name, w]));
      expect(byName.ask).toMatchObject({ status: "open", result: null, resolvedAt: null, resolvedBy: null });
      expect(byName.done).toMatchObject({ status: "resolved", result: "1", resolvedBy: "bob" });
    });
  });
}
