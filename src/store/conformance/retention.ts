/**
 * Retention: a finished run tree goes whole (its journal, waits, holds, events, snapshots and the
 * runs themselves, or all but a summary); a tree with a run not finished, or finished after the
 * cut-off, stays untouched; a session goes only with all of its turns.
 */
import { step } from "./fixtures.js";
import type { Harness } from "./harness.js";
import type { ConformanceTestApi } from "./test-api.js";

const LATER = () => Date.now() + 60_000;

export function describeRetention(api: ConformanceTestApi, h: Harness): void {
  const { describe, it, expect } = api;
  describe("retention", () => {
    /** A finished root with a child, a step, a resolved wait, a released hold and events. */
    const finishedTree = async (root: string) => {
      await h.created(root);
      await h.created(`${root}.kid`, { parentId: root, parentStepId: "kid" });
      expect(
        await h.commitOne(h.store, [
          { runId: root, steps: [step(0, "a")], waits: [{ name: "ok", kind: "approval", seq: 1 }], holds: [{ kind: "nondeterminism", reason: "x", details: "{}" }], events: [{ type: "step.completed", data: { step: "a" } }] },
        ]),
      ).toMatchObject({ ok: true });
      expect(await h.commitOne(h.store, [{ runId: root, expect: { openWait: "ok" }, resolveWaits: [{ name: "ok", seq: 1, status: "resolved", result: "1", by: null }] }])).toMatchObject({ ok: true });
      await h.setStatus(`${root}.kid`, "completed");
      await h.setStatus(root, "completed");
    };

    it("lists finished roots before the cut-off, and deletes a whole finished tree with every row of its runs", async () => {
      await finishedTree("t1");
      await h.created("open-1");
      expect(await h.store.finishedRoots(LATER(), null, 10)).toEqual(["t1"]);
      expect(await h.store.finishedRoots(0, null, 10)).toEqual([]);
      const top = Math.max(...(await h.store.events({})).map((e) => e.seq));
      const r = await h.store.deleteRunTrees(["t1"], { endedBefore: LATER(), keepSummary: false, at: Date.now() });
      expect(r).toEqual({ runs: ["t1", "t1.kid"], kept: [] });
      for (const id of ["t1", "t1.kid"]) {
        const s = await h.snapshot(h.store, id);
        expect({ ...s, events: s.events.map((e) => e.type) }).toEqual({ run: undefined, journal: [], waits: [], holds: [], events: ["run.pruned"], children: [] });
      }
      expect((await h.store.getRun("open-1"))?.status).toBe("pending");
      // Event numbers only grow: a follower's position stays valid, and the next event is past it.
      const after = (await h.store.events({})).map((e) => e.seq);
      expect(Math.max(...after)).toBeGreaterThan(top);
      await h.commitOne(h.store, [{ runId: "open-1", events: [{ type: "later" }] }]);
      expect(Math.max(...(await h.store.events({})).map((e) => e.seq))).toBeGreaterThan(Math.max(...after));
    });

    it("keeps a tree with a run not finished or finished after the cut-off, and changes nothing of it", async () => {
      await finishedTree("t2");
      await h.created("t2.late", { parentId: "t2", parentStepId: "late" });
      const before = await h.snapshot(h.store, "t2");
      const r = await h.store.deleteRunTrees(["t2"], { endedBefore: LATER(), keepSummary: false, at: Date.now() });
      expect(r).toEqual({ runs: [], kept: [{ root: "t2", reason: "run t2.late is pending" }] });
      expect(await h.snapshot(h.store, "t2")).toEqual(before);
      await h.setStatus("t2.late", "cancelled");
      const early = await h.store.deleteRunTrees(["t2"], { endedBefore: Date.now() - 60_000, keepSummary: false, at: Date.now() });
      expect(early.runs).toEqual([]);
      expect(early.kept).toEqual([{ root: "t2", reason: "run t2 ended after the cut-off" }]);
    });

    it("keeps a summary when asked: the run row, the steps its output refers to, and one run.pruned event", async () => {
      await finishedTree("t3");
      expect(await h.commitOne(h.store, [{ runId: "t3", run: { output: JSON.stringify({ text: { ref: "a" } }) } }])).toMatchObject({ ok: true });
      const r = await h.store.deleteRunTrees(["t3"], { endedBefore: LATER(), keepSummary: true, at: 1234, summaryKeeps: ({ output }) => (output?.includes('"ref":"a"') ? ["a"] : []) });
      expect(r.runs).toEqual(["t3", "t3.kid"]);
      const s = await h.snapshot(h.store, "t3");
      expect(s.run?.status).toBe("completed");
      expect({ journal: s.journal.map((j) => j.stepId), waits: s.waits, holds: s.holds, events: s.events.map((e) => [e.type, e.at]) }).toEqual({ journal: ["a"], waits: [], holds: [], events: [["run.pruned", 1234]] });
      // A summary is done: it is not listed again.
      expect(await h.store.finishedRoots(LATER(), null, 10)).toEqual([]);
    });

    it("never reduces a session's turns to summaries", async () => {
      await h.created("st-1", { sessionId: "sess-s" });
      await h.setStatus("st-1", "completed");
      const r = await h.store.deleteRunTrees(["st-1"], { endedBefore: LATER(), keepSummary: true, at: Date.now() });
      expect(r).toEqual({ runs: [], kept: [{ root: "st-1", reason: "run st-1 is a turn of session sess-s, which is deleted whole, never reduced to a summary" }] });
    });

    it("deletes a session only with all of its turns", async () => {
      await h.created("turn-1", { sessionId: "sess" });
      await h.created("turn-2", { sessionId: "sess" });
      await h.setStatus("turn-1", "completed");
      const kept = await h.store.deleteRunTrees(["turn-1"], { endedBefore: LATER(), keepSummary: false, at: Date.now() });
      expect(kept).toEqual({ runs: [], kept: [{ root: "turn-1", reason: "run turn-2 is pending" }] });
      await h.setStatus("turn-2", "failed");
      const gone = await h.store.deleteRunTrees(["turn-1"], { endedBefore: LATER(), keepSummary: false, at: Date.now() });
      expect(gone).toEqual({ runs: ["turn-1", "turn-2"], kept: [] });
    });
  });
}
