/**
 * The event stream (`RunReads.eventsAfter`): a follower that reads from any position it was given
 * gets every committed event once, in commit order, filtered as it asks, with live model text
 * compacted away under it. Positions are opaque: the cases only pass them back. What concurrent
 * writers do to it is each store's own test (test/store.postgres-event-stream.test.ts).
 */
import type { EventRow, EventStreamFilter, Store } from "../types.js";
import { newRun } from "./fixtures.js";
import type { Harness } from "./harness.js";
import type { ConformanceTestApi } from "./test-api.js";

/** Every page from `position` until one comes back short; the events in order and the position after. */
export async function readAll(store: Store, position: string | null, filter: Omit<EventStreamFilter, "limit"> = {}, limit = 1000): Promise<{ events: EventRow[]; position: string; pages: number }> {
  const events: EventRow[] = [];
  for (let pages = 1; ; pages++) {
    const page = await store.eventsAfter(position, { ...filter, limit });
    events.push(...page.events);
    position = page.position;
    if (page.events.length < limit) return { events, position, pages };
  }
}

const seqs = (events: readonly EventRow[]): number[] => events.map((e) => e.seq);

export function describeEventStream(api: ConformanceTestApi, h: Harness): void {
  const { describe, it, expect, beforeEach } = api;
  const { created, commitOne } = h;
  describe("event stream", () => {
    let store: Store;
    beforeEach(() => {
      store = h.store;
    });

    /** Runs a, b, c with events from several commits, interleaved. */
    async function history(): Promise<EventRow[]> {
      await created("a");
      await created("b");
      await store.commit([[{ runId: "a", events: [{ type: "a.1" }, { type: "a.2" }] }], [{ runId: "b", events: [{ type: "b.1" }] }]]);
      await created("c");
      await commitOne(store, [{ runId: "c", events: [{ type: "c.1" }] }, { runId: "a", events: [{ type: "a.3" }] }]);
      await commitOne(store, [{ runId: "b", events: [{ type: "b.2" }, { type: "b.3" }] }]);
      return store.events();
    }

    it("from the start: nothing in an empty store, then what was committed since, then every event in number order", async () => {
      const empty = await store.eventsAfter(null);
      expect(empty.events).toEqual([]);
      expect(typeof empty.position).toBe("string");
      const all = await history();
      expect(all).toHaveLength(10);
      expect(await readAll(store, empty.position)).toMatchObject({ events: all });
      expect(await readAll(store, null)).toMatchObject({ events: all });
      // Read to the end, a follower gets nothing more until something is committed.
      const end = await readAll(store, null);
      expect((await store.eventsAfter(end.position)).events).toEqual([]);
      await commitOne(store, [{ runId: "b", events: [{ type: "b.4" }] }]);
      expect((await store.eventsAfter(end.position)).events.map((e) => e.type)).toEqual(["b.4"]);
    });

    it("positions are short printable text without spaces (an SSE id)", async () => {
      await history();
      const positions = [(await store.eventsAfter(null)).position, (await store.eventsAfter(null, { limit: 3 })).position, (await store.eventsAfter(null, { runId: "b", limit: 1 })).position];
      for (const p of positions) {
        expect(p.length).toBeGreaterThan(0);
        expect(p.length).toBeLessThan(2048);
        expect(/^[\x21-\x7e]+$/.test(p), `printable: ${p}`).toBe(true);
      }
    });

    it("resumes from each position it gave: the events after it, each once, none before", async () => {
      const all = await history();
      const positions: string[] = [];
      let position: string | null = null;
      const oneByOne: EventRow[] = [];
      for (;;) {
        const page = await store.eventsAfter(position, { limit: 1 });
        oneByOne.push(...page.events);
        position = page.position;
        if (page.events.length === 0) break;
        positions.push(position);
      }
      expect(oneByOne).toEqual(all);
      for (const [i, p] of positions.entries()) {
        expect(seqs((await readAll(store, p)).events), `after event ${i + 1}`).toEqual(seqs(all.slice(i + 1)));
      }
    });

    it("gives a position after each event of a page: resuming from one continues right after that event", async () => {
      const all = await history();
      const empty = await store.eventsAfter(null, { runId: "nobody" });
      expect(empty.positions).toEqual([]);
      for (const [filter, limit] of [[{}, 1000], [{}, 4], [{ runId: "b" }, 1000], [{ runIds: ["a", "c"] }, 2]] as const) {
        const wanted = all.filter((e) => ("runId" in filter ? e.runId === filter.runId : "runIds" in filter ? (filter.runIds as readonly string[]).includes(e.runId) : true));
        let position: string | null = null;
        let done = 0;
        for (;;) {
          const page = await store.eventsAfter(position, { ...filter, limit });
          expect(page.positions, JSON.stringify(filter)).toHaveLength(page.events.length);
          if (page.events.length > 0) expect(page.positions[page.positions.length - 1]).toBe(page.position);
          for (const [i, p] of page.positions.entries()) {
            expect(seqs((await readAll(store, p, filter)).events), `${JSON.stringify(filter)} after event ${done + i + 1}`).toEqual(seqs(wanted.slice(done + i + 1)));
          }
          done += page.events.length;
          position = page.position;
          if (page.events.length < limit) break;
        }
        expect(done).toBe(wanted.length);
      }
    });

    it("follows one run: its events only, in order, resumed from its own positions", async () => {
      const all = await history();
      const ofA = all.filter((e) => e.runId === "a");
      expect((await readAll(store, null, { runId: "a" })).events).toEqual(ofA);
      const first = await store.eventsAfter(null, { runId: "a", limit: 2 });
      expect(first.events).toEqual(ofA.slice(0, 2));
      expect((await readAll(store, first.position, { runId: "a" })).events).toEqual(ofA.slice(2));
      const end = await readAll(store, null, { runId: "a" });
      await commitOne(store, [{ runId: "b", events: [{ type: "b.x" }] }]);
      await commitOne(store, [{ runId: "a", events: [{ type: "a.x" }] }]);
      expect((await readAll(store, end.position, { runId: "a" })).events.map((e) => e.type)).toEqual(["a.x"]);
      expect((await store.eventsAfter(null, { runId: "nobody" })).events).toEqual([]);
    });

    it("follows several runs (runIds): theirs only, in order; none for an empty list", async () => {
      const all = await history();
      const wanted = all.filter((e) => e.runId === "a" || e.runId === "c");
      expect((await readAll(store, null, { runIds: ["c", "a"] })).events).toEqual(wanted);
      expect((await readAll(store, null, { runIds: ["c", "a"] }, 2)).events).toEqual(wanted);
      const none = await store.eventsAfter(null, { runIds: [] });
      expect(none.events).toEqual([]);
      // An empty read still moves on: from its position, only what is committed later.
      await commitOne(store, [{ runId: "c", events: [{ type: "c.x" }] }]);
      expect((await readAll(store, none.position)).events.map((e) => e.type)).toEqual(["c.x"]);
    });

    it("pages by the limit, in order, a full page then the rest, and an empty read at the end", async () => {
      const all = await history();
      for (const limit of [1, 2, 3, 4, 10, 11]) {
        const r = await readAll(store, null, {}, limit);
        expect(r.events, `limit ${limit}`).toEqual(all);
        expect(r.pages, `limit ${limit}`).toBe(Math.floor(all.length / limit) + 1);
      }
      const three = await store.eventsAfter(null, { limit: 3 });
      expect(three.events).toEqual(all.slice(0, 3));
      // Events committed while a follower pages through older ones come after them, once.
      await commitOne(store, [{ runId: "c", events: [{ type: "c.late" }] }]);
      const rest = await readAll(store, three.position, {}, 3);
      expect(rest.events.map((e) => e.type)).toEqual([...all.slice(3).map((e) => e.type), "c.late"]);
    });

    it("a position after a short page covers whole commits: another filter continues from there", async () => {
      await history();
      const ofB = await readAll(store, null, { runId: "b" });
      await commitOne(store, [{ runId: "a", events: [{ type: "a.later" }] }]);
      await commitOne(store, [{ runId: "b", events: [{ type: "b.later" }] }]);
      expect((await readAll(store, ofB.position)).events.map((e) => e.type)).toEqual(["a.later", "b.later"]);
      expect((await readAll(store, ofB.position, { runIds: ["a"] })).events.map((e) => e.type)).toEqual(["a.later"]);
    });

    it("a refused unit's events never reach the stream", async () => {
      await created("r");
      const start = await readAll(store, null);
      expect(await commitOne(store, [{ runId: "r", events: [{ type: "kept?" }] }, { runId: "r", expect: { status: ["completed"] }, events: [{ type: "refused" }] }])).toMatchObject({ ok: false });
      await commitOne(store, [{ runId: "r", events: [{ type: "after" }] }]);
      expect((await readAll(store, start.position)).events.map((e) => e.type)).toEqual(["after"]);
    });

    it("refuses a malformed position or filter with a clear code, and reads nothing", async () => {
      await history();
      for (const bad of ["", " ", "not a position", "p\n", "s-1", "x".repeat(100_000), "🙂", "s1 ", "p~~"]) {
        await expect(store.eventsAfter(bad), JSON.stringify(bad.slice(0, 20))).rejects.toMatchObject({ code: "STEAD_BAD_POSITION" });
      }
      for (const bad of [42, {}, ["p1"]]) {
        await expect(store.eventsAfter(bad as unknown as string), JSON.stringify(bad)).rejects.toMatchObject({ code: "STEAD_BAD_POSITION" });
      }
      for (const limit of [0, -1, 1.5, 10_001, Number.NaN, "5" as unknown as number]) {
        await expect(store.eventsAfter(null, { limit }), `limit ${String(limit)}`).rejects.toMatchObject({ code: "STEAD_BAD_OPTION" });
      }
      await expect(store.eventsAfter(null, { runId: "a", runIds: ["b"] })).rejects.toMatchObject({ code: "STEAD_BAD_OPTION" });
      await expect(store.eventsAfter(null, { runIds: [1 as unknown as string] })).rejects.toMatchObject({ code: "STEAD_BAD_OPTION" });
      const e = await store.eventsAfter("definitely not a position").catch((x: unknown) => x as { message: string; fix?: string });
      expect(e).toMatchObject({ fix: expect.any(String) });
    });

    it("a follower inside a compacted range of live text gets the marker once, and no deleted delta", async () => {
      await store.createRun(newRun("m"), [{ type: "run.created" }]);
      const delta = (text: string) => ({ type: "model.delta", data: { step: "model-1", attempt: 1, try: 1, text } });
      for (const t of ["Hel", "lo, ", "wor"]) expect(await commitOne(store, [{ runId: "m", events: [delta(t)] }])).toMatchObject({ ok: true });
      // One follower stopped after the first delta, one after the last, one came before any.
      const before = await store.eventsAfter(null, { runId: "m", limit: 1 });
      const inside = await store.eventsAfter(null, { runId: "m", limit: 2 });
      const after = await readAll(store, null, { runId: "m" });
      expect(inside.events.map((e) => e.type)).toEqual(["run.created", "model.delta"]);
      expect(after.events.map((e) => e.type)).toEqual(["run.created", "model.delta", "model.delta", "model.delta"]);
      const step = { seq: 0, stepId: "model-1", kind: "model" as const, status: "completed" as const, attempt: 1, output: JSON.stringify("Hello, world"), startedAt: 1, completedAt: 2 };
      expect(
        await commitOne(store, [{ runId: "m", steps: [step], deleteEvents: { type: "model.delta", step: "model-1", attempt: 1 }, events: [delta("ld"), { type: "model.text", data: { step: "model-1", attempt: 1 } }] }]),
      ).toMatchObject({ ok: true });
      const types = async (p: string | null) => (await readAll(store, p, { runId: "m" })).events.map((e) => e.type);
      expect(await types(inside.position)).toEqual(["model.text"]);
      expect(await types(after.position)).toEqual(["model.text"]);
      expect(await types(before.position)).toEqual(["model.text"]);
      expect(await types(null)).toEqual(["run.created", "model.text"]);
      // Paging through the compacted range: the marker once, across every page.
      const paged = await readAll(store, inside.position, { runId: "m" }, 1);
      expect(paged.events.map((e) => e.type)).toEqual(["model.text"]);
      expect((await store.eventsAfter(paged.position, { runId: "m" })).events).toEqual([]);
    });
  });
}
