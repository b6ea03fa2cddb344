/**
 * Access tokens (`TokenStore`): a name unique among the tokens not revoked, revocation kept as a
 * record, a hash handed out only to a lookup by that hash (and matched exactly), and a coarse
 * last-use mark that concurrent touches write once per interval.
 */
import type { Store, TokenWrite } from "../types.js";
import type { Harness } from "./harness.js";
import type { ConformanceTestApi } from "./test-api.js";

const T0 = 1_700_000_000_000;

/** 64 hex digits, distinct per `n`. */
const hashOf = (n: number): string => n.toString(16).padStart(64, "a");

function token(n: number, over: Partial<TokenWrite> = {}): TokenWrite {
  return { id: `tok-${n}`, name: `name-${n}`, role: "operator", hash: hashOf(n), createdAt: T0 + n, createdBy: "ann", ...over };
}

const refusal = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

export function describeTokens(api: ConformanceTestApi, h: Harness): void {
  const { describe, it, expect, beforeEach } = api;
  describe("tokens", () => {
    let store: Store;
    beforeEach(() => {
      store = h.store;
    });

    it("a created token is listed without its hash and found by its hash with it", async () => {
      const made = await store.createToken(token(1, { createdBy: null }));
      const record = { id: "tok-1", name: "name-1", role: "operator", createdAt: T0 + 1, createdBy: null, revokedAt: null, revokedBy: null, lastUsedAt: null };
      expect(made).toEqual(record);
      expect(await store.listTokens()).toEqual([record]);
      expect(await store.findTokenByHash(hashOf(1))).toEqual({ ...record, hash: hashOf(1) });
      for (const r of await store.listTokens()) expect(Object.keys(r)).not.toContain("hash");
    });

    it("a hash is matched exactly: another hash, or the same in upper case, finds nothing", async () => {
      await store.createToken(token(1));
      expect(await store.findTokenByHash(hashOf(2))).toBeUndefined();
      expect(await store.findTokenByHash(hashOf(1).toUpperCase())).toBeUndefined();
      expect(await store.findTokenByHash(hashOf(1).slice(0, 63))).toBeUndefined();
    });

    it("a name in use by a token not revoked is refused (STEAD_ID_TAKEN) and nothing is written", async () => {
      await store.createToken(token(1));
      const e = await refusal(store.createToken(token(2, { name: "name-1" })));
      expect(e).toMatchObject({ code: "STEAD_ID_TAKEN" });
      expect((await store.listTokens()).map((t) => t.id)).toEqual(["tok-1"]);
      expect(await store.findTokenByHash(hashOf(2))).toBeUndefined();
    });

    it("of concurrent creates under one name, exactly one is written", async () => {
      const results = await Promise.all([1, 2, 3, 4, 5].map((n) => refusal(store.createToken(token(n, { name: "same" })))));
      expect(results.filter((r) => r === undefined)).toHaveLength(1);
      for (const r of results.filter((x) => x !== undefined)) expect(r).toMatchObject({ code: "STEAD_ID_TAKEN" });
      expect((await store.listTokens()).filter((t) => t.name === "same")).toHaveLength(1);
    });

    it("revoking records who and when, keeps the row, frees the name, and a second revoke finds nothing", async () => {
      await store.createToken(token(1));
      await store.createToken(token(2));
      const revoked = await store.revokeToken("name-1", "bob", T0 + 100);
      expect(revoked).toMatchObject({ id: "tok-1", name: "name-1", revokedAt: T0 + 100, revokedBy: "bob" });
      expect(revoked === undefined ? [] : Object.keys(revoked)).not.toContain("hash");
      expect(await store.revokeToken("name-1", "carl", T0 + 200)).toBeUndefined();
      expect(await store.findTokenByHash(hashOf(1))).toMatchObject({ id: "tok-1", revokedAt: T0 + 100, revokedBy: "bob" });
      expect(await store.findTokenByHash(hashOf(2))).toMatchObject({ revokedAt: null, revokedBy: null });

      await store.createToken(token(3, { name: "name-1" }));
      expect((await store.listTokens()).map((t) => [t.id, t.name, t.revokedAt])).toEqual([
        ["tok-1", "name-1", T0 + 100],
        ["tok-2", "name-2", null],
        ["tok-3", "name-1", null],
      ]);
    });

    it("revoking a name no unrevoked token has writes nothing", async () => {
      await store.createToken(token(1));
      const before = await store.listTokens();
      expect(await store.revokeToken("nobody", "bob", T0)).toBeUndefined();
      expect(await store.listTokens()).toEqual(before);
    });

    it("a touch marks the last use at most once per interval, never moves it back, and leaves a revoked token alone", async () => {
      await store.createToken(token(1));
      const last = async () => (await store.findTokenByHash(hashOf(1)))?.lastUsedAt;
      expect(await store.touchToken("tok-1", T0 + 10_000, 60_000)).toBe(true);
      expect(await last()).toBe(T0 + 10_000);
      expect(await store.touchToken("tok-1", T0 + 30_000, 60_000)).toBe(false);
      expect(await last()).toBe(T0 + 10_000);
      expect(await store.touchToken("tok-1", T0 + 70_000, 60_000)).toBe(true);
      expect(await last()).toBe(T0 + 70_000);
      // A clock behind the mark does not move it back.
      expect(await store.touchToken("tok-1", T0 + 5_000, 0)).toBe(false);
      expect(await last()).toBe(T0 + 70_000);
      // Of concurrent touches in one interval, one writes.
      const many = await Promise.all([1, 2, 3, 4].map((i) => store.touchToken("tok-1", T0 + 200_000 + i, 60_000)));
      expect(many.filter(Boolean)).toHaveLength(1);

      await store.revokeToken("name-1", "bob", T0 + 300_000);
      const before = await last();
      expect(await store.touchToken("tok-1", T0 + 900_000, 60_000)).toBe(false);
      expect(await last()).toBe(before);
      expect(await store.touchToken("no-such-token", T0, 0)).toBe(false);
    });
  });
}
