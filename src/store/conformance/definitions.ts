/**
 * Definitions workers announce (`DefinitionAnnouncements`): the catalog of names and
 * fingerprints, which outlives its workers, and each worker's announcement, alive until its
 * bound passes unless refreshed. Times follow the store's `leaseClock`, as leases do.
 */
import type { AnnouncingWorker, DefinitionAnnouncement, Store } from "../types.js";
import { LEASE } from "./fixtures.js";
import type { Harness } from "./harness.js";
import type { SuiteClock } from "./lease-clock.js";
import type { ConformanceTestApi } from "./test-api.js";

const SCHEMA = JSON.stringify({ type: "object", properties: { issue: { type: "string" } }, required: ["issue"] });

function def(name: string, over: Partial<DefinitionAnnouncement> = {}): DefinitionAnnouncement {
  return { name, kind: "workflow", fingerprint: `fp-${name}`, module: `/srv/app/${name}.ts`, inputSchema: null, ...over };
}

const worker = (workerId: string, pid = 4242, host = "host-1"): AnnouncingWorker => ({ workerId, host, pid });

export function describeDefinitions(api: ConformanceTestApi, h: Harness): void {
  const { describe, it, expect, beforeEach } = api;
  describe("definitions workers announce", () => {
    let store: Store;
    let clock: SuiteClock;
    beforeEach(() => {
      store = h.store;
      clock = h.clock;
    });

    const alive = async (name: string) =>
      (await store.listDefinitions({ name }, clock.now())).flatMap((d) => d.workers.filter((w) => w.alive).map((w) => `${w.workerId}@${d.fingerprint}`));

    it("an announcement enters the catalog and lists its worker, alive, with what it announced", async () => {
      expect(await store.listDefinitions({}, clock.now())).toEqual([]);
      const { at } = await clock.span((now) => store.announceDefinitions(worker("w1"), [def("fixer", { inputSchema: SCHEMA }), def("agent-a", { kind: "agent", module: null })], LEASE, now));
      const all = await store.listDefinitions({}, clock.now());
      expect(all.map((d) => d.name)).toEqual(["agent-a", "fixer"]);
      const fixer = all[1];
      expect(fixer).toMatchObject({ name: "fixer", fingerprint: "fp-fixer", kind: "workflow", module: "/srv/app/fixer.ts", inputSchema: SCHEMA });
      expect(all[0]).toMatchObject({ kind: "agent", module: null, inputSchema: null });
      clock.expectLeaseEnd(fixer?.firstAnnouncedAt, at, 0, "first announced");
      expect(fixer?.lastSeenAt).toBe(fixer?.firstAnnouncedAt);
      expect(fixer?.workers).toEqual([
        { workerId: "w1", name: "fixer", fingerprint: "fp-fixer", host: "host-1", pid: 4242, announcedAt: fixer?.firstAnnouncedAt, seenAt: fixer?.firstAnnouncedAt, expiresAt: expect.any(Number), alive: true },
      ]);
      clock.expectLeaseEnd(fixer?.workers[0]?.expiresAt, at, LEASE, "expiry");
      expect((await store.listDefinitions({ name: "fixer" }, clock.now())).map((d) => d.name)).toEqual(["fixer"]);
      expect(await store.listDefinitions({ name: "nobody" }, clock.now())).toEqual([]);
    });

    it("announcing again replaces the worker's set: a name it no longer lists is withdrawn, and the catalog keeps it", async () => {
      await store.announceDefinitions(worker("w1"), [def("a"), def("b")], LEASE, clock.now());
      await store.announceDefinitions(worker("w1"), [def("b"), def("c")], LEASE, clock.now());
      const all = await store.listDefinitions({}, clock.now());
      expect(all.map((d) => [d.name, d.workers.map((w) => w.workerId)])).toEqual([
        ["a", []],
        ["b", ["w1"]],
        ["c", ["w1"]],
      ]);
      await store.announceDefinitions(worker("w1"), [], LEASE, clock.now());
      expect((await store.listDefinitions({}, clock.now())).map((d) => [d.name, d.workers.length])).toEqual([
        ["a", 0],
        ["b", 0],
        ["c", 0],
      ]);
    });

    it("one name under two fingerprints is two catalog rows, the most recently seen first, each with its own workers", async () => {
      await store.announceDefinitions(worker("old", 1), [def("fixer", { fingerprint: "fp-old" })], LEASE, clock.now());
      await clock.advance(clock.epsilon + 5);
      await store.announceDefinitions(worker("new-1", 2), [def("fixer", { fingerprint: "fp-new", inputSchema: SCHEMA })], LEASE, clock.now());
      await store.announceDefinitions(worker("new-2", 3, "host-2"), [def("fixer", { fingerprint: "fp-new", inputSchema: SCHEMA })], LEASE, clock.now());
      const rows = await store.listDefinitions({ name: "fixer" }, clock.now());
      expect(rows.map((d) => [d.fingerprint, d.workers.map((w) => `${w.workerId}/${w.host}/${w.pid}`)])).toEqual([
        ["fp-new", ["new-1/host-1/2", "new-2/host-2/3"]],
        ["fp-old", ["old/host-1/1"]],
      ]);
      expect(rows[0]?.inputSchema).toBe(SCHEMA);
      expect(rows[1]?.inputSchema).toBeNull();
    });

    it("a known fingerprint announced again keeps its first announcement time and takes the kind, module and schema given", async () => {
      await store.announceDefinitions(worker("w1"), [def("fixer")], LEASE, clock.now());
      const [first] = await store.listDefinitions({ name: "fixer" }, clock.now());
      await clock.advance(clock.epsilon + 5);
      const { at } = await clock.span((now) => store.announceDefinitions(worker("w2"), [def("fixer", { module: "/other/fixer.ts", inputSchema: SCHEMA })], LEASE, now));
      const [again] = await store.listDefinitions({ name: "fixer" }, clock.now());
      expect(again).toMatchObject({ firstAnnouncedAt: first?.firstAnnouncedAt, module: "/other/fixer.ts", inputSchema: SCHEMA });
      clock.expectLeaseEnd(again?.lastSeenAt, at, 0, "last seen");
      expect(again?.workers.map((w) => w.workerId)).toEqual(["w1", "w2"]);
    });

    it("an announcement not refreshed within its bound lists as not alive; a refresh brings it back; prune deletes only the long expired", async () => {
      await store.announceDefinitions(worker("a-short"), [def("fixer")], clock.lease, clock.now());
      await store.announceDefinitions(worker("b-long"), [def("fixer")], LEASE, clock.now());
      expect(await alive("fixer")).toEqual(["a-short@fp-fixer", "b-long@fp-fixer"]);
      await clock.advance(clock.lease + clock.epsilon);
      expect(await alive("fixer")).toEqual(["b-long@fp-fixer"]);
      const [listed] = await store.listDefinitions({ name: "fixer" }, clock.now());
      expect(listed?.workers.map((w) => [w.workerId, w.alive])).toEqual([
        ["a-short", false],
        ["b-long", true],
      ]);

      const { value: refreshed, at } = await clock.span((now) => store.refreshAnnouncements("a-short", LEASE, now));
      expect(refreshed).toBe(1);
      expect(await alive("fixer")).toEqual(["a-short@fp-fixer", "b-long@fp-fixer"]);
      const [after] = await store.listDefinitions({ name: "fixer" }, clock.now());
      const short = after?.workers.find((w) => w.workerId === "a-short");
      clock.expectLeaseEnd(short?.seenAt, at, 0, "seen");
      clock.expectLeaseEnd(short?.expiresAt, at, LEASE, "expiry");
      clock.expectLeaseEnd(after?.lastSeenAt, at, 0, "catalog last seen");
      expect(await store.refreshAnnouncements("nobody", LEASE, clock.now())).toBe(0);

      await store.announceDefinitions(worker("gone"), [def("fixer"), def("other")], clock.lease, clock.now());
      await clock.advance(clock.lease + clock.epsilon);
      expect(await store.pruneAnnouncements(LEASE, clock.now())).toBe(0);
      expect(await store.pruneAnnouncements(0, clock.now())).toBe(2);
      expect((await store.listDefinitions({}, clock.now())).map((d) => [d.name, d.workers.map((w) => w.workerId)])).toEqual([
        ["fixer", ["a-short", "b-long"]],
        ["other", []],
      ]);
    });

    it("withdrawing removes that worker's announcements only; the catalog keeps every definition", async () => {
      await store.announceDefinitions(worker("w1"), [def("a"), def("b")], LEASE, clock.now());
      await store.announceDefinitions(worker("w2"), [def("b")], LEASE, clock.now());
      await store.withdrawAnnouncements("w1");
      await store.withdrawAnnouncements("nobody");
      expect((await store.listDefinitions({}, clock.now())).map((d) => [d.name, d.workers.map((w) => w.workerId)])).toEqual([
        ["a", []],
        ["b", ["w2"]],
      ]);
      expect(await store.refreshAnnouncements("w1", LEASE, clock.now())).toBe(0);
    });

    it("many workers announcing the same definitions at once all land (listed in any order they give them)", async () => {
      const names = ["d1", "d2", "d3", "d4"];
      await Promise.all(
        Array.from({ length: 6 }, (_, i) => {
          const mine = i % 2 === 0 ? names : [...names].reverse();
          return store.announceDefinitions(worker(`w${i}`, 100 + i), mine.map((n) => def(n)), LEASE, clock.now());
        }),
      );
      const all = await store.listDefinitions({}, clock.now());
      expect(all.map((d) => d.name)).toEqual(names);
      for (const d of all) expect(d.workers.map((w) => w.workerId).sort(), d.name).toEqual(["w0", "w1", "w2", "w3", "w4", "w5"]);
    });
  });
}
