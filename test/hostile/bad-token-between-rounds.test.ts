/**
 * Issue 39, item 12, as a hostile review found it: the bound on requests with a token in flight
 * held only while one of the address's bad tokens was being slowed down. Once a round of slowed
 * guesses ended, the next burst was admitted whole until the first of it was found bad, so what
 * was read per round grew with the store's round trip instead of staying at MAX_IN_FLIGHT (the
 * server guide's "at most 4 requests with a token in flight", so about 4 guesses per 5 s). Now an
 * address with a failure on record is held to the bound all the time. Asserted from the answers
 * of a real server on 127.0.0.1 (its client address from X-Forwarded-For): over rounds of
 * parallel guesses on both stores, and on Postgres with the store slow, where a valid token in a
 * burst stands for a right guess: 200 if it was read, 429 if it was refused unread.
 *
 * SQLite verifies a token without yielding to the event loop, so no request arrives while one is
 * being verified and a burst meets the bound from its first failure on; the slow-store case is
 * Postgres's alone.
 */
import { describe, expect, it } from "vitest";
import { MAX_IN_FLIGHT } from "../../src/server/slowdown.js";
import { withClient } from "../setup/databases.js";
import { STORE_KINDS } from "../helpers/both-stores.js";
import { count, guess, proxiedServer, type Answer } from "../helpers/proxied-server.js";

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe.each(STORE_KINDS)("rounds of parallel guesses from one address on %s", (kind) => {
  const server = proxiedServer(kind, "hostile-bad-token-rounds");

  it("once a round of slowed guesses has ended, each next burst has at most MAX_IN_FLIGHT answered 401; the rest are refused 429", async () => {
    const from = "198.51.100.50";
    const rounds: Answer[][] = [];
    // Each round is awaited whole: when it is answered, none of its guesses is in flight.
    for (const r of range(3)) rounds.push(await Promise.all(range(40).map((i) => server.runs(from, guess(4_000 + 100 * r + i)))));
    for (const answers of rounds.slice(1)) {
      expect(count(answers, 401)).toBeGreaterThan(0);
      expect(count(answers, 401)).toBeLessThanOrEqual(MAX_IN_FLIGHT);
      expect(count(answers, 429)).toBe(40 - count(answers, 401));
      expect(answers.filter((a) => a.status === 429).every((a) => a.code === "STEAD_TOO_MANY_BAD_TOKENS" && /^[1-9]\d*$/.test(a.retryAfter ?? ""))).toBe(true);
    }
  }, 60_000);
});

describe("a burst between rounds while the store is slow, on postgres", () => {
  const server = proxiedServer("postgres", "hostile-bad-token-slow");

  it("with a failure on record and none in flight, at most MAX_IN_FLIGHT tokens of a burst are read; the rest are refused 429 before the store answers", async () => {
    const from = "198.51.100.60";
    const first = await Promise.all(range(MAX_IN_FLIGHT + 1).map((i) => server.runs(from, guess(5_000 + i))));
    expect(count(first, 401)).toBeGreaterThan(0);

    const burst = MAX_IN_FLIGHT + 2;
    const answers = await withClient(server.served.s.location, async (lock) => {
      // Every read of a token waits for this transaction: the store's round trip made long.
      await lock.query("BEGIN");
      await lock.query("LOCK TABLE tokens IN ACCESS EXCLUSIVE MODE");
      let released = false;
      let settled = 0;
      const sent = range(burst).map(() =>
        server.runs(from, server.served.tokens.viewer).then((a) => {
          settled++;
          return { ...a, beforeRelease: !released };
        }),
      );
      try {
        // Until each request of the burst is either answered or waiting for the lock (a state, not a time).
        for (let polls = 0; polls < 1_500; polls++) {
          const waiting = Number((await lock.query<{ n: string }>("SELECT count(*) AS n FROM pg_locks WHERE relation = 'tokens'::regclass AND NOT granted")).rows[0]?.n ?? 0);
          if (waiting + settled >= burst) break;
          await new Promise((r) => setTimeout(r, 20));
        }
      } finally {
        released = true;
        await lock.query("ROLLBACK");
      }
      return Promise.all(sent);
    });

    expect(count(answers, 200) + count(answers, 429)).toBe(burst);
    // Seen on the old code: all MAX_IN_FLIGHT + 2 read and answered 200 once the store answered.
    expect(count(answers, 200), `${count(answers, 200)} of ${burst} tokens were read`).toBeLessThanOrEqual(MAX_IN_FLIGHT);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(burst - MAX_IN_FLIGHT);
    for (const a of refused) {
      expect(a.code).toBe("STEAD_TOO_MANY_BAD_TOKENS");
      expect(a.beforeRelease, "refused without waiting for the store").toBe(true);
    }
  }, 90_000);
});
