/**
 * Control commands' idempotency keys: recorded in the same transaction as the change they guard
 * (createRun and commit), read back until they expire, then pruned (`IdempotencyKeys`).
 */
import type { IdempotencyWrite, Store } from "../types.js";
import { newRun } from "./fixtures.js";
import type { Harness } from "./harness.js";
import type { ConformanceTestApi } from "./test-api.js";

function key(over: Partial<IdempotencyWrite> = {}): IdempotencyWrite {
  return { verb: "approve", scope: "r1", key: "k-1", digest: "d1", summary: '{"wait":"ok"}', result: '{"approved":true}', actor: "ann", ttlMs: 60_000, ...over };
}

export function describeIdempotencyKeys(api: ConformanceTestApi, h: Harness): void {
  const { describe, it, expect, beforeEach } = api;
  const { commitOne } = h;
  describe("idempotency keys", () => {
    let store: Store;
    beforeEach(() => {
      store = h.store;
    });

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

    it("createRun refused for an id already taken records none of its key, whatever starts share its commit", async () => {
      await store.createRun(newRun("taken"), []);
      const asked = [
        store.createRun(newRun("taken"), [{ type: "run.created" }], key({ verb: "start", scope: "def-a" })),
        store.createRun(newRun("b1"), [{ type: "run.created" }]),
      ];
      const [refused, other] = await Promise.allSettled(asked);
      expect(refused?.status === "rejected" ? refused.reason : undefined).toMatchObject({ code: "STEAD_ID_TAKEN" });
      expect(other?.status).toBe("fulfilled");
      expect(await store.idempotencyKey("start", "def-a", "k-1")).toBeUndefined();
      await store.createRun(newRun("b2"), [{ type: "run.created" }], key({ verb: "start", scope: "def-a" }));
      expect((await store.getRun("b2"))?.status).toBe("pending");
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
  });
}
