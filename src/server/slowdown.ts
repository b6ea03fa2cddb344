/**
 * Repeated bad tokens from one address are answered ever more slowly (doubling from 100 ms, at
 * most 5 s), so guessing costs time; a good token from that address forgets its failures.
 * Bounded: at most MAX_ADDRESSES are remembered, the oldest dropped first.
 */
import { setTimeout as delay } from "node:timers/promises";

const BASE_MS = 100;
const MAX_MS = 5_000;
const MAX_ADDRESSES = 10_000;
/** Failures older than this are forgotten. */
const WINDOW_MS = 15 * 60_000;

export class BadTokenSlowdown {
  private readonly failures = new Map<string, { count: number; last: number }>();

  /** Waits as long as `address`'s recent failures ask, then records this one. */
  async failed(address: string): Promise<void> {
    const now = Date.now();
    const f = this.failures.get(address);
    const count = f && now - f.last < WINDOW_MS ? f.count + 1 : 1;
    this.failures.delete(address);
    this.failures.set(address, { count, last: now });
    if (this.failures.size > MAX_ADDRESSES) {
      const oldest = this.failures.keys().next().value;
      if (oldest !== undefined) this.failures.delete(oldest);
    }
    if (count > 1) await delay(Math.min(MAX_MS, BASE_MS * 2 ** (count - 2)));
  }

  succeeded(address: string): void {
    this.failures.delete(address);
  }

  /** The recent failures remembered for `address` (0: none). */
  failuresOf(address: string, now = Date.now()): number {
    const f = this.failures.get(address);
    return f && now - f.last < WINDOW_MS ? f.count : 0;
  }
}
