/**
 * How the conformance suite moves time past a lease, chosen from `store.leaseClock`.
 *
 * - "caller": the store judges lease times by the `now` it is given. Time is virtual: `advance` adds
 *   to it and waits for nothing, and a lease set at `now` ends at exactly `now + leaseMs`.
 * - "store": the store judges lease times by its own clock and must ignore `now`. Time is real:
 *   `advance` sleeps, and a lease end is known only within the span of the call that set it.
 *   The `now` handed to the store is deliberately an hour ahead (a worker whose clock disagrees):
 *   a store that used it would reclaim live leases and set lease ends an hour off, and fail.
 *
 * Hazard: the "store" clock assumes the store's clock agrees with this process's `Date.now()` within
 * the tolerance (default STORE_CLOCK_TOLERANCE_MS: a server on this host). A server on a host
 * skewed by more fails the range checks.
 */
import type { Store } from "../types.js";
import type { Expect } from "./test-api.js";

/** Clock granularity and rounding between this process and a store on the same host. */
export const STORE_CLOCK_TOLERANCE_MS = 50;
/** The disagreeing worker clock handed to a "store" clock store, which must ignore it. */
const WORKER_CLOCK_AHEAD_MS = 3_600_000;

/** When a call was made: its `now` for a caller clock, or the real times around it for a store clock. */
export interface CallSpan {
  before: number;
  after: number;
}

export interface SuiteClock {
  readonly kind: Store["leaseClock"];
  /**
   * Lease length for claims a case waits out: 1 s of virtual time, or 300 ms of real time (short
   * enough to wait, long enough that a check made half-way through it is reliably before its end).
   */
  readonly lease: number;
  /** The least extra step that surely crosses a lease end: 1 ms virtual, the clock tolerance and a bit real. */
  readonly epsilon: number;
  /** The `now` to pass to claim/renewLeases. */
  now(): number;
  advance(ms: number): Promise<void>;
  /** Makes `call` with the current `now`; returns its result and when it was made. */
  span<T>(call: (now: number) => Promise<T>): Promise<{ value: T; at: CallSpan }>;
  /** `actual` is the end of a `leaseMs` lease set by the call made `at`: exact for a caller clock, within the span for a store clock. */
  expectLeaseEnd(actual: number | null | undefined, at: CallSpan, leaseMs: number, what?: string): void;
}

function callerClock(expect: Expect): SuiteClock {
  let t = Date.now();
  return {
    kind: "caller",
    lease: 1_000,
    epsilon: 1,
    now: () => t,
    advance(ms) {
      t += ms;
      return Promise.resolve();
    },
    async span(call) {
      const at = t;
      return { value: await call(at), at: { before: at, after: at } };
    },
    expectLeaseEnd(actual, at, leaseMs, what = "lease end") {
      expect(actual, what).toBe(at.before + leaseMs);
    },
  };
}

function storeClock(expect: Expect, tolerance: number): SuiteClock {
  return {
    kind: "store",
    lease: 300,
    epsilon: tolerance + 10,
    now: () => Date.now() + WORKER_CLOCK_AHEAD_MS,
    advance: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    async span(call) {
      const before = Date.now();
      const value = await call(Date.now() + WORKER_CLOCK_AHEAD_MS);
      return { value, at: { before, after: Date.now() } };
    },
    expectLeaseEnd(actual, at, leaseMs, what = "lease end") {
      expect(actual, what).toEqual(expect.any(Number));
      expect(actual, `${what} (set at store time ${at.before}..${at.after} + ${leaseMs} ms)`).toBeGreaterThanOrEqual(at.before + leaseMs - tolerance);
      expect(actual, `${what} (set at store time ${at.before}..${at.after} + ${leaseMs} ms)`).toBeLessThanOrEqual(at.after + leaseMs + tolerance);
    },
  };
}

export function clockFor(store: Store, expect: Expect, tolerance = STORE_CLOCK_TOLERANCE_MS): SuiteClock {
  switch (store.leaseClock) {
    case "caller":
      return callerClock(expect);
    case "store":
      return storeClock(expect, tolerance);
    default:
      throw new Error(`store ${store.dialect} reports leaseClock ${JSON.stringify(store.leaseClock)}; expected "caller" or "store"`);
  }
}
