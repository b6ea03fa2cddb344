/** Events: numbered, written with the change they report, read by filter (`RunReads.events`). */
import type { Store } from "../types.js";
import { newRun } from "./fixtures.js";
import type { Harness } from "./harness.js";
import type { ConformanceTestApi } from "./test-api.js";

export function describeEvents(api: ConformanceTestApi, h: Harness): void {
  const { describe, it, expect, beforeEach } = api;
  const { created, commitOne } = h;
  describe("events", () => {
    let store: Store;
    beforeEach(() => {
      store = h.store;
    });

    it("are numbered in increasing order, in the order written, with their data", async () => {
      await store.createRun(newRun("e1"), [{ type: "run.created", data: { n: 1 } }, { type: "second" }]);
      await created("e2");
      await store.commit([
        [{ runId: "e1", events: [{ type: "third", data: { nested: { ok: true } } }] }],
        [{ runId: "e2", events: [{ type: "fourth" }, { type: "fifth" }] }],
      ]);
      const all = await store.events();
      expect(all.map((e) => [e.runId, e.type])).toEqual([
        ["e1", "run.created"],
        ["e1", "second"],
        ["e2", "run.created"],
        ["e1", "third"],
        ["e2", "fourth"],
        ["e2", "fifth"],
      ]);
      for (let i = 1; i < all.length; i++) expect(all[i]?.seq).toBeGreaterThan(all[i - 1]?.seq ?? Infinity);
      expect(JSON.parse(all[0]?.data ?? "")).toEqual({ n: 1 });
      expect(JSON.parse(all[1]?.data ?? "")).toEqual({});
      expect(JSON.parse(all[3]?.data ?? "")).toEqual({ nested: { ok: true } });
      expect(all.every((e) => typeof e.at === "number" && e.at > 0)).toBe(true);
    });

    it("are written in the same transaction as their change: a refused unit writes none", async () => {
      await created("e1");
      const before = await store.events();
      const r = await commitOne(store, [
        { runId: "e1", run: { output: '"x"' }, events: [{ type: "first.change" }] },
        { runId: "e1", expect: { status: ["waiting"] }, run: { status: "running" }, events: [{ type: "second.change" }] },
      ]);
      expect(r).toMatchObject({ ok: false, reason: "status", runId: "e1" });
      expect(await store.events()).toEqual(before);
      expect((await store.getRun("e1"))?.output).toBeNull();
    });

    it("filter by run, after a sequence number, and limit", async () => {
      await created("a");
      await created("b");
      await store.commit([[{ runId: "a", events: [{ type: "a.1" }, { type: "a.2" }] }], [{ runId: "b", events: [{ type: "b.1" }] }]]);
      const all = await store.events();
      expect((await store.events({ runId: "a" })).map((e) => e.type)).toEqual(["run.created", "a.1", "a.2"]);
      // all: a run.created, b run.created, a.1, a.2, b.1
      const cut = all[1]?.seq ?? -1;
      expect((await store.events({ afterSeq: cut })).map((e) => e.seq)).toEqual(all.slice(2).map((e) => e.seq));
      expect((await store.events({ runId: "a", afterSeq: cut })).map((e) => e.type)).toEqual(["a.1", "a.2"]);
      expect((await store.events({ limit: 2 })).map((e) => e.seq)).toEqual(all.slice(0, 2).map((e) => e.seq));
      expect((await store.events({ runId: "b", afterSeq: cut, limit: 1 })).map((e) => e.type)).toEqual(["b.1"]);
    });

    it("deleteEvents drops one step attempt's live events in the commit that writes the step, and nothing else", async () => {
      await store.createRun(newRun("r1"), []);
      const delta = (step: string, attempt: number, text: string) => ({ type: "model.delta", data: { step, attempt, try: 1, text } });
      expect(await commitOne(store, [{ runId: "r1", events: [delta("model-1", 1, "cut "), delta("model-2", 1, "other"), { type: "step.intent", data: { step: "model-1", attempt: 2 } }, delta("model-1", 2, "Hel"), delta("model-1", 2, "lo")] }])).toMatchObject({ ok: true });
      const seenBefore = Math.max(...(await store.events({ runId: "r1" })).map((e) => e.seq));
      expect(await commitOne(store, [{ runId: "r1", deleteEvents: { type: "model.delta", step: "model-1", attempt: 2 }, events: [{ type: "step.completed", data: { step: "model-1" } }] }])).toMatchObject({ ok: true });
      // A follower that read up to seenBefore must still find what the compaction wrote: numbers only grow.
      const after = (await store.events({ runId: "r1", afterSeq: seenBefore })).map((e) => e.type);
      expect(after).toEqual(["step.completed"]);
      const left = (await store.events({ runId: "r1" })).map((e) => `${e.type} ${(JSON.parse(e.data) as { step?: string; attempt?: number }).step ?? ""} ${(JSON.parse(e.data) as { attempt?: number }).attempt ?? ""}`.trim());
      expect(left).toEqual(["model.delta model-1 1", "model.delta model-2 1", "step.intent model-1 2", "step.completed model-1"]);
      // The deleted deltas were the newest rows: their numbers are not handed out again.
      await expect(store.commit([[{ runId: "r1", deleteEvents: { type: "step.intent", step: "model-1", attempt: 2 }, events: [{ type: "x" }] }]])).rejects.toMatchObject({ code: "STEAD_INVALID_MUTATION" });
      // A compaction writes the event that takes the deleted ones' place.
      await expect(store.commit([[{ runId: "r1", deleteEvents: { type: "model.delta", step: "model-1", attempt: 1 } }]])).rejects.toMatchObject({ code: "STEAD_INVALID_MUTATION" });
    });

    it("a compaction deletes after it inserts: a live event of the compacted attempt in the same write goes too", async () => {
      await store.createRun(newRun("r1"), []);
      const delta = (text: string) => ({ type: "model.delta", data: { step: "model-1", attempt: 1, try: 1, text } });
      expect(await commitOne(store, [{ runId: "r1", events: [delta("Hel")] }])).toMatchObject({ ok: true });
      expect(await commitOne(store, [{ runId: "r1", deleteEvents: { type: "model.delta", step: "model-1", attempt: 1 }, events: [delta("lo"), { type: "model.text", data: { step: "model-1" } }] }])).toMatchObject({ ok: true });
      expect((await store.events({ runId: "r1" })).map((e) => e.type)).toEqual(["model.text"]);
    });
  });
}
