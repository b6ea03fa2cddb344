/**
 * Worker presence (`WorkerPresence`, optional): an attached worker keeps its leases; once its
 * presence is gone (detached, or its connection dropped) `expireGoneOwners` ends them at once,
 * so another worker takes its runs without waiting the leases out.
 */
import type { Store, WorkerAttachment } from "../types.js";
import { DEF_A, eventually, LEASE, owner } from "./fixtures.js";
import type { Harness } from "./harness.js";
import type { CaseFn, ConformanceTestApi } from "./test-api.js";

export function describeWorkerPresence(api: ConformanceTestApi, h: Harness): void {
  const { describe, it, expect, beforeEach, afterEach } = api;
  const { created, claimed } = h;
  const name = h.factory.name;
  describe("worker presence", () => {
    let store: Store;
    let presence: Required<Pick<Store, "attachWorker" | "expireGoneOwners">>;
    const attached: WorkerAttachment[] = [];
    beforeEach(() => {
      store = h.store;
      presence = store as typeof presence;
    });
    afterEach(async () => {
      for (const a of attached.splice(0)) await a.detach();
    });
    const attach = async (workerId: string, onWake: () => void = () => undefined): Promise<WorkerAttachment> => {
      const a = await presence.attachWorker(workerId, onWake);
      attached.push(a);
      return a;
    };
    const withPresence = (title: string, fn: CaseFn): void => {
      if (h.factory.workerPresence) it(title, fn);
      else it.skip(`${title} (skipped: the ${name} factory declares no worker presence)`, fn);
    };
    /** The runs expireGoneOwners ends, once it ends any (a closed connection's lock goes a moment after the close). */
    const expiredOnce = (what: string) =>
      eventually(what, async () => {
        const ids = await presence.expireGoneOwners();
        return ids.length > 0 ? ids.sort() : undefined;
      });

    it(`has attachWorker and expireGoneOwners both or neither, as the ${name} factory declares (workerPresence)`, () => {
      expect(typeof store.expireGoneOwners, "expireGoneOwners").toBe(typeof store.attachWorker);
      expect(typeof store.attachWorker === "function", "attachWorker is a function").toBe(h.factory.workerPresence === true);
      return Promise.resolve();
    });

    withPresence("expireGoneOwners ends the leases of owners with no presence, and only theirs, writing lease.expired; a detach ends a presence at once", async () => {
      for (const id of ["r-live", "r-gone", "r-never", "r-parked"]) await created(id);
      const now = h.clock.now();
      await attach("w-live");
      const gone = await attach("w-gone");
      await claimed("r-live", "w-live", now);
      await claimed("r-gone", "w-gone", now);
      await claimed("r-never", "w-never", now);
      await claimed("r-parked", "w-gone", now);
      expect(await h.commitOne(store, [{ runId: "r-parked", expect: { lease: { fence: 1, owner: "w-gone" } }, run: { status: "waiting", releaseLease: true } }])).toMatchObject({ ok: true });
      const live = await store.getRun("r-live");

      // An owner that never attached has no presence.
      expect(await presence.expireGoneOwners()).toEqual(["r-never"]);
      expect(await presence.expireGoneOwners()).toEqual([]);
      await gone.detach();
      await gone.detach();
      expect(await expiredOnce("w-gone's lease to end")).toEqual(["r-gone"]);
      expect(await presence.expireGoneOwners()).toEqual([]);

      expect(await store.getRun("r-live")).toEqual(live);
      expect(await store.getRun("r-parked")).toMatchObject({ status: "waiting", leaseOwner: null });
      const expired = (await store.events({ runId: "r-gone" })).filter((e) => e.type === "lease.expired");
      expect(expired).toHaveLength(1);
      expect(JSON.parse(expired[0]?.data ?? "{}")).toMatchObject({ fence: 1 });
      // Taken back at once, as a lost claim; the live owner's run is not.
      const taken = await store.claim({ owner: owner("w-next"), definitions: [DEF_A], limit: 10, leaseMs: LEASE, now: h.clock.now() });
      expect(taken.map((c) => [c.run.id, c.previousStatus, c.run.fence, c.run.lostClaims]).sort()).toEqual([
        ["r-gone", "running", 2, 1],
        ["r-never", "running", 2, 1],
      ]);
    });

    withPresence("onWake is called when a run may have become runnable", async () => {
      let woken = 0;
      await attach("w-wake", () => woken++);
      const before = woken;
      await created("r-new");
      await eventually("onWake after a new pending run", () => Promise.resolve(woken > before ? true : undefined));
    });

    const dropped = "a dropped presence settles lost, and another worker's expireGoneOwners ends that owner's leases";
    if (h.factory.workerPresence && h.factory.dropPresence) {
      withPresence(dropped, async () => {
        await created("r1");
        const a = await attach("w-drop");
        await claimed("r1", "w-drop", h.clock.now());
        let settled = false;
        void a.lost.then(() => (settled = true));
        await h.factory.dropPresence?.(store, "w-drop");
        await eventually("lost to settle", () => Promise.resolve(settled ? true : undefined));
        expect(await expiredOnce("w-drop's lease to end")).toEqual(["r1"]);
      });
    } else {
      it.skip(`${dropped} (skipped: the ${name} factory ${h.factory.workerPresence ? "provides no dropPresence()" : "declares no worker presence"})`, () => Promise.resolve());
    }
  });
}
