/** Creating runs and reading them back (`Commits.createRun`, `RunReads`). */
import type { NewRun, RunQuery, Store } from "../types.js";
import { DEF_A, DEF_B, newRun, step } from "./fixtures.js";
import type { Harness } from "./harness.js";
import type { ConformanceTestApi } from "./test-api.js";

export function describeRuns(api: ConformanceTestApi, h: Harness): void {
  const { describe, it, expect, beforeEach } = api;
  const { created, setStatus, commitOne, snapshot } = h;
  describe("runs", () => {
    let store: Store;
    beforeEach(() => {
      store = h.store;
    });

    it("createRun + getRun round-trip every field", async () => {
      const full: NewRun = {
        id: "full-1",
        definition: DEF_B,
        module: "/abs/path/flow.ts",
        fingerprint: "fp-xyz",
        input: JSON.stringify({ a: [1, "two", null], b: "é∂" }),
        parentId: "parent-1",
        parentStepId: "kid",
        status: "paused",
        workspace: "/work/repo é",
        createdAt: 1_700_000_000_123,
      };
      await store.createRun(full, []);
      const row = await store.getRun("full-1");
      expect(row).toEqual({
        id: "full-1",
        definition: DEF_B,
        module: "/abs/path/flow.ts",
        fingerprint: "fp-xyz",
        status: "paused",
        input: full.input,
        output: null,
        error: null,
        parentId: "parent-1",
        parentStepId: "kid",
        fence: 0,
        leaseOwner: null,
        leaseExpiresAt: null,
        ownerHost: null,
        ownerPid: null,
        ownerStart: null,
        lostClaims: 0,
        pauseRequested: false,
        sessionId: null,
        turn: null,
        workspace: "/work/repo é",
        outputRefs: null,
        createdAt: 1_700_000_000_123,
        updatedAt: expect.any(Number) as number,
      });

      await store.createRun({ id: "min-1", definition: DEF_A, module: null, fingerprint: null, input: "null", createdAt: 5 }, []);
      expect(await store.getRun("min-1")).toMatchObject({ status: "pending", fingerprint: null, module: null, parentId: null, parentStepId: null, input: "null", workspace: null });
      expect(await store.getRun("nope")).toBeUndefined();
    });

    it("keeps a completed run's output references beside its output, as written", async () => {
      await store.createRun({ id: "refs-1", definition: DEF_A, module: null, fingerprint: null, input: "null", createdAt: 5 }, []);
      const refs = JSON.stringify([{ field: "text", step: "model-1", path: ["content", 0, "text"] }]);
      expect((await store.commit([[{ runId: "refs-1", run: { status: "completed", output: '{"text":null,"n":1}', outputRefs: refs } }]]))[0]).toMatchObject({ ok: true });
      expect(await store.getRun("refs-1")).toMatchObject({ output: '{"text":null,"n":1}', outputRefs: refs });
      expect((await store.listRuns({ limit: 10 })).runs.find((r) => r.id === "refs-1")).toMatchObject({ outputRefs: refs });
    });

    it("createRun returns the row getRun then reads, field for field and in the same order", async () => {
      const shapes: NewRun[] = [
        { id: "ret-full", definition: DEF_B, module: "/abs/flow.ts", fingerprint: "fp", input: JSON.stringify({ x: "é" }), parentId: "p-1", parentStepId: "kid", status: "paused", workspace: "/w", createdAt: 1_700_000_000_001 },
        { id: "ret-min", definition: DEF_A, module: null, fingerprint: null, input: "null", createdAt: 7 },
        { id: "ret-turn-1", definition: DEF_A, module: null, fingerprint: "fp", input: "1", sessionId: "ret-session", createdAt: 8 },
        { id: "ret-turn-2", definition: DEF_A, module: null, fingerprint: "fp", input: "2", sessionId: "ret-session", createdAt: 9 },
        { id: "ret-journal", definition: DEF_A, module: null, fingerprint: "fp", input: "3", createdAt: 10, journal: [step(0, "a")] },
      ];
      for (const shape of shapes) {
        const returned = await store.createRun(shape, [{ type: "run.created" }]);
        const read = await store.getRun(shape.id);
        expect(returned).toEqual(read);
        expect(JSON.stringify(returned)).toBe(JSON.stringify(read));
      }
      expect((await store.getRun("ret-turn-2"))?.turn).toBe(2);
    });

    it("refuses a duplicate run id and changes nothing", async () => {
      await store.createRun(newRun("dup", { input: '"first"' }), [{ type: "run.created" }]);
      const before = await snapshot(store, "dup");
      await expect(store.createRun(newRun("dup", { input: '"second"', definition: DEF_B }), [{ type: "run.created", data: { again: true } }])).rejects.toThrow();
      expect(await snapshot(store, "dup")).toEqual(before);
      expect((await store.listRuns()).runs).toHaveLength(1);
    });

    it("createRun writes the journal rows it is given, ordered by seq", async () => {
      const rows = [step(1, "b", { kind: "effect", status: "failed", output: null, error: '{"message":"x"}' }), step(0, "a")];
      await store.createRun(newRun("j1", { journal: rows }), []);
      const journal = await store.journal("j1");
      expect(journal.map((s) => s.seq)).toEqual([0, 1]);
      expect(journal[0]).toEqual({ runId: "j1", seq: 0, stepId: "a", kind: "step", status: "completed", attempt: 1, output: '"a"', error: null, startedAt: 1_000, completedAt: 2_000, checkpoint: null });
      expect(journal[1]).toEqual({ runId: "j1", seq: 1, stepId: "b", kind: "effect", status: "failed", attempt: 1, output: null, error: '{"message":"x"}', startedAt: 1_001, completedAt: 2_001, checkpoint: null });
    });

    it("listRuns filters by status, definition and parent, and honours limit", async () => {
      await created("p1");
      await created("p2", { definition: DEF_B });
      await created("c1", { parentId: "p1", parentStepId: "s" });
      await created("c2", { parentId: "p1", parentStepId: "t", definition: DEF_B });
      await created("c3", { parentId: "p2", parentStepId: "s" });
      await setStatus("c2", "waiting");
      await setStatus("p2", "completed");
      const ids = async (q: RunQuery = {}) => (await store.listRuns(q)).runs.map((r) => r.id).sort();
      expect(await ids()).toEqual(["c1", "c2", "c3", "p1", "p2"]);
      expect(await ids({ status: ["waiting", "completed"] })).toEqual(["c2", "p2"]);
      expect(await ids({ definition: DEF_B })).toEqual(["c2", "p2"]);
      expect(await ids({ parentId: "p1" })).toEqual(["c1", "c2"]);
      expect(await ids({ parentId: "p1", status: ["pending"], definition: DEF_A })).toEqual(["c1"]);
      expect((await store.listRuns({ limit: 2 })).runs).toHaveLength(2);
      expect(await store.listRuns({ parentId: "nobody" })).toEqual({ runs: [], nextCursor: null });
    });

    it("countRuns counts what listRuns would list without a limit, under the same filters", async () => {
      expect(await store.countRuns()).toBe(0);
      for (let i = 0; i < 7; i++) await created(`r${i}`);
      await created("b1", { definition: DEF_B });
      await created("k1", { parentId: "r0", parentStepId: "s" });
      await created("t1", { sessionId: "sess-1" });
      await created("t2", { sessionId: "sess-1" });
      await setStatus("r1", "waiting");
      await setStatus("b1", "completed");
      expect(await store.countRuns()).toBe(11);
      expect(await store.countRuns({ status: ["waiting", "completed"] })).toBe(2);
      expect(await store.countRuns({ status: ["pending"] })).toBe(9);
      expect(await store.countRuns({ definition: DEF_B })).toBe(1);
      expect(await store.countRuns({ parentId: "r0" })).toBe(1);
      expect(await store.countRuns({ sessionId: "sess-1" })).toBe(2);
      expect(await store.countRuns({ definition: DEF_A, status: ["pending"] })).toBe(9);
      expect(await store.countRuns({ parentId: "nobody" })).toBe(0);
      expect(await store.countRuns({ status: [] })).toBe(11);
      // Far more than a page: the count has no limit.
      for (let i = 0; i < 1_005; i += 201) {
        const kids = Array.from({ length: 201 }, (_, j) => newRun(`bulk-${i + j}`, { parentId: "r0", parentStepId: `s${i + j}` }));
        expect(await commitOne(store, [{ runId: "r0", newRuns: kids }])).toMatchObject({ ok: true });
      }
      expect(await store.countRuns({ parentId: "r0" })).toBe(1 + 1_005);
      expect((await store.listRuns({ parentId: "r0", limit: 1_000 })).runs).toHaveLength(1_000);
    });
  });
}
