/** Claims: which runs a worker may take, and under which lease (`ClaimsAndLeases.claim`, `claimable`). */
import type { Store } from "../types.js";
import { DEF_A, DEF_B, LEASE, owner, step, fenced } from "./fixtures.js";
import type { Harness } from "./harness.js";
import type { SuiteClock } from "./lease-clock.js";
import type { ConformanceTestApi } from "./test-api.js";

export function describeClaims(api: ConformanceTestApi, h: Harness): void {
  const { describe, it, expect, beforeEach } = api;
  const { created, claimed, setStatus, commitOne, snapshot } = h;
  describe("claims", () => {
    let store: Store;
    let clock: SuiteClock;
    beforeEach(() => {
      store = h.store;
      clock = h.clock;
    });

    it("claims only pending runs (or running with an expired lease) of the given definitions", async () => {
      const t = clock.now();
      await created("a-pending");
      await created("b-pending", { definition: DEF_B });
      await created("a-paused", { status: "paused" });
      for (const [id, status] of [["a-waiting", "waiting"], ["a-held", "held"], ["a-completed", "completed"], ["a-failed", "failed"], ["a-cancelled", "cancelled"]] as const) {
        await created(id);
        await setStatus(id, status);
      }
      await created("a-live");
      await claimed("a-live", "other", t);

      const got = await store.claim({ owner: owner("w1"), definitions: [DEF_A], limit: 100, leaseMs: LEASE, now: t + 10 });
      expect(got.map((c) => c.run.id)).toEqual(["a-pending"]);
      const more = await store.claim({ owner: owner("w1"), definitions: [DEF_A, DEF_B], limit: 100, leaseMs: LEASE, now: t + 20 });
      expect(more.map((c) => c.run.id)).toEqual(["b-pending"]);
      expect(await store.claim({ owner: owner("w1"), definitions: ["def-unknown"], limit: 100, leaseMs: LEASE, now: t + LEASE * 10 })).toEqual([]);
      expect(await store.claim({ owner: owner("w1"), definitions: [], limit: 100, leaseMs: LEASE, now: t + LEASE * 10 })).toEqual([]);
    });

    it("sets the lease and owner, grows the fence by one, reports the previous status, and writes run.claimed", async () => {
      await created("r1", { journal: [step(0, "done-before")] });
      const o = owner("w1", "host-9", 777);
      const {
        value: [c],
        at,
      } = await clock.span((now) => store.claim({ owner: o, definitions: [DEF_A], limit: 5, leaseMs: LEASE, now }));
      expect(c?.previousStatus).toBe("pending");
      expect(c?.run).toMatchObject({ id: "r1", status: "running", fence: 1, leaseOwner: "w1", ownerHost: "host-9", ownerPid: 777, ownerStart: o.start, lostClaims: 0 });
      clock.expectLeaseEnd(c?.run.leaseExpiresAt, at, LEASE);
      expect(c?.journal.map((s) => s.stepId)).toEqual(["done-before"]);
      expect(await store.getRun("r1")).toEqual(c?.run);
      const types = (await store.events({ runId: "r1" })).map((e) => e.type);
      expect(types).toEqual(["run.created", "run.claimed"]);
    });

    it("reclaims a running run only after its lease expired, counting a lost claim; the fence grows by exactly 1 per claim", async () => {
      const lease = clock.lease;
      await created("r1");
      expect(await claimed("r1", "w1", clock.now(), owner("w1"), lease)).toBe(1);

      await clock.advance(lease / 2);
      expect(await store.claim({ owner: owner("w2"), definitions: [DEF_A], limit: 5, leaseMs: lease, now: clock.now() })).toEqual([]);

      await clock.advance(lease / 2 + clock.epsilon);
      const {
        value: [c2],
        at,
      } = await clock.span((now) => store.claim({ owner: owner("w2"), definitions: [DEF_A], limit: 5, leaseMs: lease, now }));
      expect(c2?.previousStatus).toBe("running");
      expect(c2?.run).toMatchObject({ fence: 2, leaseOwner: "w2", lostClaims: 1 });
      clock.expectLeaseEnd(c2?.run.leaseExpiresAt, at, lease);

      // Handed back as pending: the next claim is not a lost one.
      expect(await commitOne(store, [fenced("r1", 2, "w2", { run: { status: "pending", releaseLease: true } })])).toMatchObject({ ok: true });
      await clock.advance(1);
      const [c3] = await store.claim({ owner: owner("w3"), definitions: [DEF_A], limit: 5, leaseMs: LEASE, now: clock.now() });
      expect(c3?.previousStatus).toBe("pending");
      expect(c3?.run).toMatchObject({ fence: 3, leaseOwner: "w3", lostClaims: 1 });
    });

    it("claims only the listed runIds when given", async () => {
      const t = clock.now();
      for (const id of ["r1", "r2", "r3"]) await created(id);
      const got = await store.claim({ owner: owner("w1"), definitions: [DEF_A], limit: 10, leaseMs: LEASE, now: t, runIds: ["r2", "not-a-run"] });
      expect(got.map((c) => c.run.id)).toEqual(["r2"]);
      expect(await store.claim({ owner: owner("w1"), definitions: [DEF_A], limit: 10, leaseMs: LEASE, now: t, runIds: [] })).toEqual([]);
      expect((await store.getRun("r1"))?.status).toBe("pending");
      expect((await store.getRun("r3"))?.status).toBe("pending");
    });

    it("claimable lists what claim would take (same rule, order, limit and runIds), with journals and current status, changing nothing", async () => {
      const lease = clock.lease;
      await created("a-expired");
      await claimed("a-expired", "gone", clock.now(), owner("gone"), lease);
      await clock.advance(lease + clock.epsilon);
      await created("a-1", { journal: [step(0, "done-before")] });
      await created("a-2");
      await created("b-1", { definition: DEF_B });
      await created("a-held");
      await setStatus("a-held", "held");
      await created("a-live");
      await claimed("a-live", "other", clock.now());
      // A session's second turn waits for its first.
      await created("s-1", { sessionId: "S" });
      await created("s-2", { sessionId: "S" });
      const ids = ["a-expired", "a-1", "a-2", "b-1", "a-held", "a-live", "s-1", "s-2"];
      const before = await Promise.all(ids.map((id) => snapshot(store, id)));

      const now = clock.now();
      const all = await store.claimable({ definitions: [DEF_A, DEF_B], limit: 10, now });
      expect(all.map((c) => c.run.id).sort()).toEqual(["a-1", "a-2", "a-expired", "b-1", "s-1"]);
      expect(all.find((c) => c.run.id === "a-expired")).toMatchObject({ previousStatus: "running", run: { status: "running", fence: 1, leaseOwner: "gone" } });
      expect(all.find((c) => c.run.id === "a-1")).toMatchObject({ previousStatus: "pending", run: { status: "pending", fence: 0, leaseOwner: null } });
      expect(all.find((c) => c.run.id === "a-1")?.journal.map((j) => j.stepId)).toEqual(["done-before"]);
      expect((await store.claimable({ definitions: [DEF_A], limit: 10, now })).map((c) => c.run.id).sort()).toEqual(["a-1", "a-2", "a-expired", "s-1"]);
      expect((await store.claimable({ definitions: [DEF_A, DEF_B], limit: 10, now, runIds: ["a-2", "a-held", "a-live", "nope"] })).map((c) => c.run.id)).toEqual(["a-2"]);
      expect(await store.claimable({ definitions: [DEF_A], limit: 0, now })).toEqual([]);
      expect(await store.claimable({ definitions: [], limit: 10, now })).toEqual([]);
      // Nothing changed: no lease, no fence, no event.
      expect(await Promise.all(ids.map((id) => snapshot(store, id)))).toEqual(before);

      // The same runs in the same order as the claim that follows, limit for limit.
      const two = await store.claimable({ definitions: [DEF_A, DEF_B], limit: 2, now });
      const taken = await store.claim({ owner: owner("w1"), definitions: [DEF_A, DEF_B], limit: 2, leaseMs: LEASE, now });
      expect(two.map((c) => c.run.id)).toEqual(taken.map((c) => c.run.id));
      const rest = await store.claimable({ definitions: [DEF_A, DEF_B], limit: 10, now });
      expect(rest.map((c) => c.run.id)).toEqual((await store.claim({ owner: owner("w1"), definitions: [DEF_A, DEF_B], limit: 10, leaseMs: LEASE, now })).map((c) => c.run.id));
      expect(rest).toHaveLength(3);
    });

    it("honours the limit", async () => {
      const t = clock.now();
      for (let i = 0; i < 5; i++) await created(`r${i}`);
      expect(await store.claim({ owner: owner("w1"), definitions: [DEF_A], limit: 0, leaseMs: LEASE, now: t })).toEqual([]);
      const first = await store.claim({ owner: owner("w1"), definitions: [DEF_A], limit: 2, leaseMs: LEASE, now: t });
      expect(first).toHaveLength(2);
      const rest = await store.claim({ owner: owner("w1"), definitions: [DEF_A], limit: 10, leaseMs: LEASE, now: t });
      expect(rest).toHaveLength(3);
      expect(new Set([...first, ...rest].map((c) => c.run.id)).size).toBe(5);
    });

    h.needsReopen(it, "two store instances claiming at once never claim the same run", async () => {
      const other = await h.reopen();
      const t = clock.now();
      const n = 40;
      for (let i = 0; i < n; i++) await created(`r${String(i).padStart(2, "0")}`);
      const drain = async (s: Store, workerId: string): Promise<string[]> => {
        const mine: string[] = [];
        for (;;) {
          const got = await s.claim({ owner: owner(workerId), definitions: [DEF_A], limit: 3, leaseMs: 60_000, now: t });
          if (got.length === 0) return mine;
          mine.push(...got.map((c) => c.run.id));
        }
      };
      const [a, b] = await Promise.all([drain(store, "wa"), drain(other, "wb")]);
      const all = [...a, ...b];
      expect(all).toHaveLength(n);
      expect(new Set(all).size).toBe(n);
      for (const id of a) expect(await store.getRun(id)).toMatchObject({ fence: 1, leaseOwner: "wa" });
      for (const id of b) expect(await store.getRun(id)).toMatchObject({ fence: 1, leaseOwner: "wb" });
    });
  });
}
