/** Sessions and turns: numbered by the store, claimed one at a time, in order. */
import type { NewRun, RunQuery, RunRow, RunStatus, Store } from "../types.js";
import { sessionTurns } from "../run-sets.js";
import { DEF_A, DEF_B, LEASE, owner, newRun } from "./fixtures.js";
import type { Harness } from "./harness.js";
import type { SuiteClock } from "./lease-clock.js";
import type { ConformanceTestApi } from "./test-api.js";

export function describeSessions(api: ConformanceTestApi, h: Harness): void {
  const { describe, it, expect, beforeEach } = api;
  const { created, setStatus, commitOne, snapshot } = h;
  describe("sessions and turns", () => {
    let store: Store;
    let clock: SuiteClock;
    beforeEach(() => {
      store = h.store;
      clock = h.clock;
    });

    const TERMINAL: readonly RunStatus[] = ["completed", "failed", "cancelled"];

    /** Creates run `id` as the next turn of `sessionId`; returns the row createRun gave back. */
    async function turn(id: string, sessionId: string, over: Partial<NewRun> = {}): Promise<RunRow> {
      return store.createRun(newRun(id, { sessionId, ...over }), [{ type: "run.created", data: { id } }]);
    }

    async function claimable(runIds?: string[], limit = 50): Promise<string[]> {
      const got = await store.claim({ owner: owner("w1"), definitions: [DEF_A, DEF_B], limit, leaseMs: LEASE, now: clock.now(), ...(runIds ? { runIds } : {}) });
      return got.map((c) => c.run.id).sort();
    }

    it("createRun numbers each session's turns 1, 2, 3 on its own, returns the row, and leaves runs outside a session unnumbered", async () => {
      const rows = [
        await turn("a1", "S-a", { createdAt: 1_000 }),
        await turn("b1", "S-b", { createdAt: 1_500 }),
        await turn("a2", "S-a", { createdAt: 2_000 }),
        await store.createRun(newRun("plain", { createdAt: 2_500 }), []),
        await turn("a3", "S-a", { createdAt: 3_000 }),
        await turn("b2", "S-b", { createdAt: 3_500 }),
      ];
      expect(rows.map((r) => [r.id, r.sessionId, r.turn])).toEqual([
        ["a1", "S-a", 1],
        ["b1", "S-b", 1],
        ["a2", "S-a", 2],
        ["plain", null, null],
        ["a3", "S-a", 3],
        ["b2", "S-b", 2],
      ]);
      for (const r of rows) expect(await store.getRun(r.id)).toEqual(r);
      expect(rows[0]).toMatchObject({ status: "pending", fence: 0, definition: DEF_A, createdAt: 1_000, updatedAt: 1_000 });
      const ids = async (q: RunQuery) => (await store.listRuns(q)).runs.map((r) => r.id);
      expect(await ids({ sessionId: "S-a", order: "asc" })).toEqual(["a1", "a2", "a3"]);
      expect(await ids({ sessionId: "S-a", order: "asc", limit: 2 })).toEqual(["a1", "a2"]);
      expect(await ids({ sessionId: "S-b", status: ["pending"], order: "asc" })).toEqual(["b1", "b2"]);
      expect(await store.listRuns({ sessionId: "S-none" })).toEqual({ runs: [], nextCursor: null });
      // A refused duplicate id takes no turn number.
      await expect(turn("a3", "S-a")).rejects.toThrow();
      expect((await turn("a4", "S-a")).turn).toBe(4);
    });

    h.needsReopen(it, "concurrent createRun on one session through two store instances gives distinct, consecutive turns", async () => {
      const other = await h.reopen();
      const n = 24;
      const made = await Promise.all(
        Array.from({ length: n }, (_, i) => (i % 2 === 0 ? store : other).createRun(newRun(`t${String(i).padStart(2, "0")}`, { sessionId: "S-race" }), [])),
      );
      expect(made.map((r) => r.turn).sort((x, y) => (x ?? 0) - (y ?? 0))).toEqual(Array.from({ length: n }, (_, i) => i + 1));
      const stored = await sessionTurns(store, "S-race");
      expect(stored.map((r) => r.turn)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
      for (const r of made) expect(stored.find((x) => x.id === r.id)?.turn).toBe(r.turn);
    });

    it("claim skips a turn while an earlier turn is pending, running, waiting, held or paused, and takes it once that turn ended", async () => {
      await turn("s1", "S", { createdAt: 1_000 });
      await turn("s2", "S", { createdAt: 2_000 });
      await turn("s3", "S", { createdAt: 3_000 });
      // Pending turn 1 blocks turns 2 and 3, even when asked for by id.
      expect(await claimable(["s2", "s3"])).toEqual([]);
      expect(await claimable()).toEqual(["s1"]);
      // Turn 1 is running now.
      expect(await claimable(["s2"])).toEqual([]);
      for (const status of ["waiting", "held", "paused", "pending"] as const) {
        await setStatus("s1", status);
        expect(await claimable(["s2", "s3"]), `turn 1 ${status}`).toEqual([]);
      }
      for (const status of TERMINAL) {
        const sid = `S-${status}`;
        await turn(`${sid}-1`, sid);
        await turn(`${sid}-2`, sid);
        await setStatus(`${sid}-1`, status);
        expect(await claimable([`${sid}-2`]), `turn 1 ${status}`).toEqual([`${sid}-2`]);
      }
      // Turn 1 completed: turn 2 is next; turn 3 still waits behind it.
      await setStatus("s1", "completed");
      expect(await claimable()).toEqual(["s2"]);
      expect(await claimable(["s3"])).toEqual([]);
      await setStatus("s2", "failed");
      expect(await claimable()).toEqual(["s3"]);
    });

    it("claim needs every earlier turn ended, not only the one just before", async () => {
      await turn("s1", "S");
      await turn("s2", "S");
      await turn("s3", "S");
      await setStatus("s1", "held");
      await setStatus("s2", "cancelled");
      expect(await claimable()).toEqual([]);
      await setStatus("s1", "cancelled");
      expect(await claimable()).toEqual(["s3"]);
    });

    it("runs outside a session, and other sessions, are claimed as before; blocked turns take no claim slot", async () => {
      await turn("s1", "S", { createdAt: 1_000 });
      await turn("s2", "S", { createdAt: 2_000 });
      await turn("t1", "T", { createdAt: 3_000 });
      await created("plain", { createdAt: 4_000 });
      await setStatus("s1", "held");
      await setStatus("t1", "held");
      // The oldest candidates (s2, then t1) are not claimable: the one slot goes to the plain run.
      expect(await claimable(undefined, 1)).toEqual(["plain"]);
      await turn("u1", "U", { createdAt: 5_000 });
      expect(await claimable()).toEqual(["u1"]);
    });

    it("listSessions reports turns, open turns, the current and the last ended turn, most recently updated first", async () => {
      await turn("a1", "A", { createdAt: 1_000 });
      await turn("a2", "A", { createdAt: 1_100 });
      await turn("a3", "A", { createdAt: 1_200 });
      await turn("a4", "A", { createdAt: 1_300, definition: DEF_B });
      await turn("b1", "B", { createdAt: 900 });
      await turn("c1", "C", { createdAt: 1_050 });
      await turn("c2", "C", { createdAt: 1_150 });
      await created("plain", { createdAt: 1_400 });
      await commitOne(store, [{ runId: "a1", run: { status: "completed", output: '"ok"' } }]);
      await commitOne(store, [{ runId: "a2", run: { status: "failed", error: '{"message":"boom"}' } }]);
      await commitOne(store, [{ runId: "c1", run: { status: "completed" } }]);
      await commitOne(store, [{ runId: "c2", run: { status: "cancelled", error: '{"message":"cancelled"}' } }]);

      const list = await store.listSessions();
      expect(list.map((s) => s.sessionId).sort()).toEqual(["A", "B", "C"]);
      const byId = Object.fromEntries(list.map((s) => [s.sessionId, s]));
      const updated = async (sid: string) => Math.max(...(await store.listRuns({ sessionId: sid })).runs.map((r) => r.updatedAt));
      expect(byId.A).toEqual({
        sessionId: "A",
        definition: DEF_B,
        turns: 4,
        open: 2,
        current: { runId: "a3", turn: 3, status: "pending" },
        last: { runId: "a2", turn: 2, status: "failed", error: '{"message":"boom"}' },
        createdAt: 1_000,
        updatedAt: await updated("A"),
      });
      expect(byId.B).toEqual({
        sessionId: "B",
        definition: DEF_A,
        turns: 1,
        open: 1,
        current: { runId: "b1", turn: 1, status: "pending" },
        last: null,
        createdAt: 900,
        updatedAt: 900,
      });
      expect(byId.C).toEqual({
        sessionId: "C",
        definition: DEF_A,
        turns: 2,
        open: 0,
        current: null,
        last: { runId: "c2", turn: 2, status: "cancelled", error: '{"message":"cancelled"}' },
        createdAt: 1_050,
        updatedAt: await updated("C"),
      });
      // Most recently updated first: B, untouched since it was created, comes last.
      expect(list.map((s) => s.updatedAt)).toEqual(list.map((s) => s.updatedAt).sort((x, y) => y - x));
      expect(list[2]?.sessionId).toBe("B");
      expect(await store.listSessions({ limit: 1 })).toEqual([list[0]]);
      expect(await store.listSessions({ sessionId: "C" })).toEqual([byId.C]);
      expect(await store.listSessions({ sessionId: "nobody" })).toEqual([]);

      // A claimed, waiting current turn is reported with its status.
      expect(await claimable(["a3"])).toEqual(["a3"]);
      await setStatus("a3", "waiting");
      expect((await store.listSessions({ sessionId: "A" }))[0]?.current).toEqual({ runId: "a3", turn: 3, status: "waiting" });
    });

    it("refuses a session in a mutation's newRuns and changes nothing", async () => {
      await created("parent");
      const before = await snapshot(store, "parent");
      await expect(
        store.commit([[{ runId: "parent", events: [{ type: "x" }], newRuns: [newRun("kid", { sessionId: "S", parentId: "parent", parentStepId: "k" })] }]]),
      ).rejects.toMatchObject({ code: "STEAD_INVALID_MUTATION" });
      expect(await snapshot(store, "parent")).toEqual(before);
      expect(await store.getRun("kid")).toBeUndefined();
    });
  });
}
