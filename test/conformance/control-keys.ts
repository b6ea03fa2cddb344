/**
 * Conformance for what control commands need from a store: idempotency keys recorded in the same
 * transaction as the change they guard (createRun and commit), waits a cancellation closed opened
 * again, and the one compaction of events. Every store passes it unchanged, through the `Store`
 * interface only.
 *
 *   describeControlKeyConformance("sqlite", factory);   // the factory of store-conformance.ts
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { IdempotencyWrite, Mutation, NewRun, Store, UnitResult } from "../../src/store/types.js";
import type { StoreFactory, StoreUnderTest } from "./store-conformance.js";

function newRun(id: string, over: Partial<NewRun> = {}): NewRun {
  return { id, definition: "def-a", module: null, fingerprint: "fp-1", input: JSON.stringify({ id }), createdAt: Date.now(), ...over };
}

function key(over: Partial<IdempotencyWrite> = {}): IdempotencyWrite {
  return { verb: "approve", scope: "r1", key: "k-1", digest: "d1", summary: '{"wait":"ok"}', result: '{"approved":true}', actor: "ann", ttlMs: 60_000, ...over };
}

async function commitOne(store: Store, unit: Mutation[]): Promise<UnitResult> {
  const [r] = await store.commit([unit]);
  return r as UnitResult;
}

export function describeControlKeyConformance(name: string, factory: StoreFactory): void {
  describe(`Store conformance (control keys, reopened waits, compacted events): ${name}`, () => {
    let sut: StoreUnderTest;
    let store: Store;
    beforeEach(async () => {
      sut = await factory();
      store = sut.store;
    });
    afterEach(() => sut.cleanup());

    it("a key committed with a unit is read back; the same key again fails that unit (idempotency) and applies none of it", async () => {
      await store.createRun(newRun("r1"), []);
      expect(await commitOne(store, [{ runId: "r1", events: [{ type: "first" }], idempotency: key() }])).toMatchObject({ ok: true });
      const row = await store.idempotencyKey("approve", "r1", "k-1");
      expect(row).toMatchObject({ verb: "approve", scope: "r1", key: "k-1", digest: "d1", summary: '{"wait":"ok"}', result: '{"approved":true}', actor: "ann" });
      expect((row?.expiresAt ?? 0) - (row?.createdAt ?? 0)).toBe(60_000);
      const again = await commitOne(store, [{ runId: "r1", events: [{ type: "second" }], idempotency: key({ digest: "d2" }) }]);
      expect(again).toMatchObject({ ok: false, reason: "idempotency", runId: "r1" });
      expect((await store.events({ runId: "r1" })).map((e) => e.type)).toEqual(["first"]);
      expect(await store.idempotencyKey("approve", "r1", "k-1")).toEqual(row);
    });

    it("keys are scoped by verb and scope: the same key elsewhere is another key", async () => {
      await store.createRun(newRun("r1"), []);
      await store.createRun(newRun("r2"), []);
      for (const k of [key(), key({ verb: "deny" }), key({ scope: "r2" })]) {
        expect(await commitOne(store, [{ runId: k.scope, idempotency: k }]), `${k.verb} ${k.scope}`).toMatchObject({ ok: true });
      }
      expect(await store.idempotencyKey("signal", "r1", "k-1")).toBeUndefined();
    });

    it("createRun with a key recorded already fails and creates nothing", async () => {
      await store.createRun(newRun("a1"), [{ type: "run.created" }], key({ verb: "start", scope: "def-a" }));
      const e = await store.createRun(newRun("a2"), [{ type: "run.created" }], key({ verb: "start", scope: "def-a" })).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(e).toMatchObject({ code: "STEAD_IDEMPOTENCY_CONFLICT" });
      expect(await store.getRun("a2")).toBeUndefined();
      expect((await store.events({ runId: "a2" })).length).toBe(0);
      expect(JSON.parse((await store.idempotencyKey("start", "def-a", "k-1"))?.result ?? "null")).toEqual({ approved: true });
    });

    it("an expired key reads as absent, may be recorded anew, and is pruned", async () => {
      await store.createRun(newRun("r1"), []);
      expect(await commitOne(store, [{ runId: "r1", idempotency: key({ ttlMs: 1 }) }])).toMatchObject({ ok: true });
      expect(await commitOne(store, [{ runId: "r1", idempotency: key({ key: "k-keep" }) }])).toMatchObject({ ok: true });
      await new Promise((r) => setTimeout(r, 30));
      expect(await store.idempotencyKey("approve", "r1", "k-1")).toBeUndefined();
      expect(await store.pruneIdempotencyKeys()).toBe(1);
      expect(await store.idempotencyKey("approve", "r1", "k-keep")).toBeDefined();
      expect(await commitOne(store, [{ runId: "r1", idempotency: key({ digest: "d-new" }) }])).toMatchObject({ ok: true });
      expect((await store.idempotencyKey("approve", "r1", "k-1"))?.digest).toBe("d-new");
    });

    it("reopenWaits opens waits a cancellation closed, and only those", async () => {
      await store.createRun(newRun("r1"), []);
      const waits = [
        { name: "ask", kind: "approval" as const, seq: 0 },
        { name: "done", kind: "signal" as const, seq: 1 },
      ];
      expect(await commitOne(store, [{ runId: "r1", waits }])).toMatchObject({ ok: true });
      expect(await commitOne(store, [{ runId: "r1", resolveWaits: [{ name: "ask", status: "cancelled", by: "ann" }, { name: "done", status: "resolved", result: "1", by: "bob" }] }])).toMatchObject({ ok: true });
      expect(await commitOne(store, [{ runId: "r1", reopenWaits: ["ask", "done"] }])).toMatchObject({ ok: true });
      const byName = Object.fromEntries((await store.waits("r1")).map((w) => [w.name, w]));
      expect(byName.ask).toMatchObject({ status: "open", result: null, resolvedAt: null, resolvedBy: null });
      expect(byName.done).toMatchObject({ status: "resolved", result: "1", resolvedBy: "bob" });
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
  });
}
