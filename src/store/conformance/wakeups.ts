/**
 * Wake-ups: a worker listening to the store hears of a write that made a run claimable (a new
 * pending run, an answered wait, a run set pending) without waiting for its poll. In-process
 * (`onWake`, SQLite) or through worker presence (`attachWorker`'s `onWake`, Postgres's LISTEN).
 * A store with neither is polled only, and the cases are skipped, saying so.
 */
import type { Store, WorkerAttachment } from "../types.js";
import { eventually } from "./fixtures.js";
import type { Harness } from "./harness.js";
import type { CaseFn, ConformanceTestApi } from "./test-api.js";

export function describeWakeups(api: ConformanceTestApi, h: Harness): void {
  const { describe, it, expect, afterEach } = api;
  const name = h.factory.name;
  describe("wake-ups", () => {
    const ends: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const end of ends.splice(0)) await end();
    });
    /** Counts the wake-ups a worker of `store` hears from now on. */
    const listen = async (store: Store): Promise<{ heard: () => number }> => {
      let n = 0;
      const hear = () => void n++;
      if (store.onWake) {
        const off = store.onWake(hear);
        ends.push(() => Promise.resolve(off()));
      } else if (store.attachWorker) {
        const a: WorkerAttachment = await store.attachWorker("w-listening", hear);
        ends.push(() => a.detach());
      }
      return { heard: () => n };
    };
    const heardMore = (l: { heard: () => number }, than: number, what: string) => eventually(what, () => Promise.resolve(l.heard() > than ? l.heard() : undefined));
    const withWakeups = (title: string, fn: CaseFn): void => {
      if (h.factory.workerPresence || h.factory.inProcessWakeups) it(title, fn);
      else it.skip(`${title} (skipped: the ${name} factory declares no wake-ups, neither inProcessWakeups nor workerPresence; its workers poll)`, fn);
    };
    const inProcess = (title: string, fn: CaseFn): void => {
      if (h.factory.inProcessWakeups) it(title, fn);
      else it.skip(`${title} (skipped: the ${name} factory declares no in-process wake-ups (inProcessWakeups))`, fn);
    };

    it(`has onWake exactly when the ${name} factory declares inProcessWakeups`, () => {
      expect(typeof h.store.onWake === "function", "onWake is a function").toBe(h.factory.inProcessWakeups === true);
      return Promise.resolve();
    });

    withWakeups("a new pending run, an answered wait and a run set pending each wake a listening worker", async () => {
      const store = h.store;
      const l = await listen(store);
      await h.created("r-new");
      const afterCreate = await heardMore(l, 0, "the new run's wake-up");
      await h.claimed("r-new", "w-1", h.clock.now());
      const parked = await h.commitOne(store, [
        { runId: "r-new", expect: { lease: { fence: 1, owner: "w-1" } }, run: { status: "waiting", releaseLease: true }, waits: [{ name: "ok", kind: "approval", seq: 0 }] },
      ]);
      expect(parked).toMatchObject({ ok: true });
      const answered = await h.commitOne(store, [
        { runId: "r-new", expect: { openWait: "ok" }, resolveWaits: [{ name: "ok", seq: 0, status: "resolved", result: "true", by: null }] },
        { runId: "r-new", optional: true, expect: { status: ["waiting"] }, run: { status: "pending" } },
      ]);
      expect(answered).toMatchObject({ ok: true });
      await heardMore(l, afterCreate, "the answered wait's wake-up");
      expect((await store.getRun("r-new"))?.status).toBe("pending");
    });

    inProcess("onWake is called once the write has committed, never for a refused write, and not after unsubscribing", async () => {
      const store = h.store;
      const onWake = store.onWake?.bind(store);
      if (!onWake) throw new Error(`the ${name} factory declares inProcessWakeups, but its store has no onWake`);
      const seen: (string | undefined)[] = [];
      const off = onWake(() => void store.getRun("r-1").then((r) => seen.push(r?.status)));
      await h.created("r-1");
      await new Promise((r) => setImmediate(r));
      // Heard after the commit: the listener reads the run it woke for.
      expect(seen).toEqual(["pending"]);
      const refused = await h.commitOne(store, [{ runId: "r-1", expect: { status: ["waiting"] }, run: { status: "pending" } }]);
      expect(refused).toMatchObject({ ok: false });
      await new Promise((r) => setImmediate(r));
      expect(seen).toEqual(["pending"]);
      off();
      await h.created("r-2");
      await new Promise((r) => setImmediate(r));
      expect(seen).toEqual(["pending"]);
    });
  });
}
