/** Renewing and ending leases (`ClaimsAndLeases`). */
import type { Store } from "../types.js";
import { DEF_A, LEASE, owner, fenced } from "./fixtures.js";
import type { Harness } from "./harness.js";
import type { SuiteClock } from "./lease-clock.js";
import type { ConformanceTestApi } from "./test-api.js";

export function describeLeases(api: ConformanceTestApi, h: Harness): void {
  const { describe, it, expect, beforeEach } = api;
  const { created, claimed, commitOne } = h;
  describe("leases", () => {
    let store: Store;
    let clock: SuiteClock;
    beforeEach(() => {
      store = h.store;
      clock = h.clock;
    });

    it("renewLeases renews, in one call, exactly the leases held with the given fence by that owner", async () => {
      for (const id of ["r1", "r2", "r3", "r4", "r5"]) await created(id);
      for (const id of ["r1", "r2", "r3"]) await claimed(id, "w1", clock.now());
      const { at: r4Claim } = await clock.span((now) => claimed("r4", "w2", now));
      await claimed("r5", "w1", clock.now());
      await commitOne(store, [fenced("r5", 1, "w1", { run: { status: "waiting", releaseLease: true } })]);
      const before = await store.getRun("r2");

      await clock.advance(100);
      const { value: renewed, at } = await clock.span((now) =>
        store.renewLeases(
          "w1",
          [
            { runId: "r1", fence: 1 },
            { runId: "r2", fence: 7 },
            { runId: "r3", fence: 1 },
            { runId: "r4", fence: 1 },
            { runId: "r5", fence: 1 },
            { runId: "ghost", fence: 1 },
          ],
          5_000,
          now,
        ),
      );
      expect([...renewed].sort()).toEqual(["r1", "r3"]);
      clock.expectLeaseEnd((await store.getRun("r1"))?.leaseExpiresAt, at, 5_000, "r1 lease end");
      clock.expectLeaseEnd((await store.getRun("r3"))?.leaseExpiresAt, at, 5_000, "r3 lease end");
      expect(await store.getRun("r2")).toEqual(before);
      clock.expectLeaseEnd((await store.getRun("r4"))?.leaseExpiresAt, r4Claim, LEASE, "r4 lease end");
      expect((await store.getRun("r5"))?.leaseExpiresAt).toBeNull();
      expect(await store.renewLeases("w1", [], 5_000, clock.now())).toEqual([]);
    });

    it("a renewed lease is not reclaimable until the renewed expiry", async () => {
      const lease = clock.lease;
      const renewal = 3 * lease;
      await created("r1");
      await claimed("r1", "w1", clock.now(), owner("w1"), lease);
      await clock.advance(lease / 2);
      expect(await store.renewLeases("w1", [{ runId: "r1", fence: 1 }], renewal, clock.now())).toEqual(["r1"]);
      // 2 leases after the claim: past the first lease's end, and past the end a renewal by `lease`
      // instead of `renewal` would have set; a whole lease before the renewed end.
      await clock.advance(1.5 * lease);
      expect(await store.claim({ owner: owner("w2"), definitions: [DEF_A], limit: 1, leaseMs: LEASE, now: clock.now() })).toEqual([]);
      await clock.advance(renewal - 1.5 * lease + clock.epsilon);
      expect(await store.claim({ owner: owner("w2"), definitions: [DEF_A], limit: 1, leaseMs: LEASE, now: clock.now() })).toHaveLength(1);
    });

    it("expireLease ends a lease only while it carries the given fence", async () => {
      const t = clock.now();
      await created("r1");
      await store.claim({ owner: owner("w1"), definitions: [DEF_A], limit: 1, leaseMs: 3_600_000, now: t });
      expect(await store.expireLease("r1", 2, "wrong fence")).toBe(false);
      expect(await store.claim({ owner: owner("w2"), definitions: [DEF_A], limit: 1, leaseMs: LEASE, now: clock.now() })).toEqual([]);
      expect(await store.expireLease("r1", 1, "owner gone")).toBe(true);
      const [c] = await store.claim({ owner: owner("w2"), definitions: [DEF_A], limit: 1, leaseMs: LEASE, now: clock.now() });
      expect(c?.previousStatus).toBe("running");
      expect(c?.run).toMatchObject({ fence: 2, leaseOwner: "w2", lostClaims: 1 });
      expect(await store.expireLease("r1", 1, "stale")).toBe(false);
      await commitOne(store, [fenced("r1", 2, "w2", { run: { status: "completed", releaseLease: true } })]);
      expect(await store.expireLease("r1", 2, "not running")).toBe(false);
      expect((await store.getRun("r1"))?.status).toBe("completed");
    });

    it("leasesOnHost lists the running runs' leases on one host", async () => {
      for (const id of ["r1", "r2", "r3"]) await created(id);
      const a = owner("w1", "host-a", 101);
      const b = owner("w2", "host-b", 202);
      const { at } = await clock.span((now) => claimed("r1", "w1", now, a));
      await claimed("r2", "w2", clock.now(), b);
      await claimed("r3", "w1", clock.now(), a);
      await commitOne(store, [fenced("r3", 1, "w1", { run: { status: "pending", releaseLease: true } })]);
      const onA = await store.leasesOnHost("host-a");
      expect(onA).toEqual([
        { runId: "r1", fence: 1, leaseOwner: "w1", ownerHost: "host-a", ownerPid: 101, ownerStart: a.start, leaseExpiresAt: expect.any(Number) as number },
      ]);
      clock.expectLeaseEnd(onA[0]?.leaseExpiresAt, at, LEASE);
      expect((await store.leasesOnHost("host-b")).map((l) => l.runId)).toEqual(["r2"]);
      expect(await store.leasesOnHost("host-c")).toEqual([]);
    });
  });
}
