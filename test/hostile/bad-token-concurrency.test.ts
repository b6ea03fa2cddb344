/**
 * Issue 39, item 12: guessing tokens in parallel from one client address. The slowdown of bad
 * tokens was a delay per request, so 200 parallel guesses were all verified and answered within
 * 5 s, and one valid token from the same address forgot every failure. Now an address whose bad
 * tokens are being slowed down has only a few requests with a token in flight at once; the rest
 * are answered 429 with Retry-After at once, before their token is read, and a valid token does not
 * forget the address's failures. Asserted from the answers a real server on 127.0.0.1 gave (its
 * client address from X-Forwarded-For, as behind a trusted proxy), on both stores.
 */
import { describe, expect, it } from "vitest";
import { MAX_IN_FLIGHT } from "../../src/server/slowdown.js";
import { STORE_KINDS } from "../helpers/both-stores.js";
import { count, guess, proxiedServer } from "../helpers/proxied-server.js";

describe.each(STORE_KINDS)("bad tokens in parallel from one address on %s", (kind) => {
  const server = proxiedServer(kind, "hostile-bad-tokens");
  const { runs, signIn } = server;

  it("200 parallel guesses: a few are verified (401), the rest are refused 429 with Retry-After; other addresses are served", async () => {
    const attacker = "198.51.100.20";
    const flood = Promise.all(Array.from({ length: 200 }, (_, i) => runs(attacker, guess(i))));
    // While the flood is in flight another address is served as usual.
    expect((await runs("198.51.100.21", server.served.tokens.viewer)).status).toBe(200);
    const answers = await flood;

    expect(count(answers, 401) + count(answers, 429)).toBe(200);
    expect(count(answers, 401)).toBeGreaterThan(0);
    // The old slowdown verified all 200 (each answered 401 within 5 s); what is verified now is
    // bounded by the requests in flight at once, MAX_IN_FLIGHT, and the few slots freed meanwhile.
    expect(count(answers, 401)).toBeLessThanOrEqual(5 * MAX_IN_FLIGHT);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(200 - 5 * MAX_IN_FLIGHT);
    for (const a of refused) {
      expect(a.code).toBe("STEAD_TOO_MANY_BAD_TOKENS");
      expect(a.retryAfter).toMatch(/^[1-9]\d*$/);
    }
    expect(answers.filter((a) => a.status === 401).every((a) => a.code === "STEAD_TOKEN_REFUSED")).toBe(true);
  });

  it("a valid token from the same address does not forget its failures: the next guesses are still bounded, and a sign-in is held to the same bound", async () => {
    const attacker = "198.51.100.30";
    const first = await Promise.all(Array.from({ length: MAX_IN_FLIGHT + 1 }, (_, i) => runs(attacker, guess(1_000 + i))));
    expect(count(first, 401)).toBeGreaterThan(0);
    // Nothing of the address is in flight now: its valid token is served...
    expect((await runs(attacker, server.served.tokens.viewer)).status).toBe(200);
    // ...and its failures stand: MAX_IN_FLIGHT + 1 parallel guesses are all slowed down, so one is
    // over the bound. Had the valid token forgotten them, the first would go unslowed and all
    // MAX_IN_FLIGHT + 1 be answered 401.
    const after = await Promise.all([
      ...Array.from({ length: MAX_IN_FLIGHT }, (_, i) => runs(attacker, guess(2_000 + i))),
      signIn(attacker, guess(2_100)),
    ]);
    expect(count(after, 429)).toBeGreaterThanOrEqual(1);
    expect(after.filter((a) => a.status === 429).every((a) => a.code === "STEAD_TOO_MANY_BAD_TOKENS" && /^[1-9]\d*$/.test(a.retryAfter ?? ""))).toBe(true);
    expect(count(after, 401) + count(after, 429)).toBe(MAX_IN_FLIGHT + 1);
  });
});
