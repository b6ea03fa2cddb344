/**
 * The Store conformance suite: every store (SQLite, Postgres, a user's own) must pass it
 * unchanged. It speaks only the `Store` ports, never a dialect's tables or SQL, and imports no
 * test runner: the caller hands it its own test functions.
 *
 *   import { describe, it, expect, beforeEach, afterEach } from "vitest";
 *   import { describeStoreConformance } from "stead/conformance";
 *   describeStoreConformance({ name: "mine", open, reopen, dispose }, { describe, it, expect, beforeEach, afterEach });
 *
 * Cases about lease expiry run on the store's `leaseClock` (see lease-clock.ts): virtual time and
 * exact lease ends for a "caller" clock, real waits and lease ends within the call's span for a
 * "store" clock. Timers (`dueTimers(now)`) use the caller's `now` on every store.
 */
import type { StoreFactory } from "./factory.js";
import { Harness } from "./harness.js";
import type { ConformanceTestApi } from "./test-api.js";
import { describeCheckpoints } from "./checkpoints.js";
import { describeClaims } from "./claims.js";
import { describeDefinitions } from "./definitions.js";
import { describeEvents } from "./events.js";
import { describeEventStream } from "./event-stream.js";
import { describeGuardedMutations } from "./guarded-mutations.js";
import { describeIdempotencyKeys } from "./idempotency-keys.js";
import { describeLeases } from "./leases.js";
import { describeLifecycle } from "./lifecycle.js";
import { describeRuns } from "./runs.js";
import { describeRunListing } from "./run-listing.js";
import { describeSessions } from "./sessions.js";
import { describeSnapshotsAndBlobs } from "./snapshots-blobs.js";
import { describeTimersAndHolds } from "./timers-holds.js";
import { describeDataKeys } from "./data-keys.js";
import { describeTokens } from "./tokens.js";
import { describeTransferRows } from "./transfer-rows.js";
import { describeTallies } from "./tallies.js";
import { describeRetention } from "./retention.js";
import { describeWakeups } from "./wakeups.js";
import { describeWorkerPresence } from "./worker-presence.js";
import { describeWrites } from "./writes.js";

export type { StoreFactory } from "./factory.js";
export type { Assertion, CaseFn, CaseRegistrar, ConformanceTestApi, Expect, Matchers } from "./test-api.js";
export { STORE_CLOCK_TOLERANCE_MS } from "./lease-clock.js";

/** Each concern's cases, by name, in the order the suite runs them. */
const CONCERNS = {
  lifecycle: describeLifecycle,
  runs: describeRuns,
  "run-listing": describeRunListing,
  "snapshots-blobs": describeSnapshotsAndBlobs,
  events: describeEvents,
  "event-stream": describeEventStream,
  claims: describeClaims,
  "guarded-mutations": describeGuardedMutations,
  writes: describeWrites,
  checkpoints: describeCheckpoints,
  leases: describeLeases,
  "timers-holds": describeTimersAndHolds,
  sessions: describeSessions,
  "idempotency-keys": describeIdempotencyKeys,
  tokens: describeTokens,
  "data-keys": describeDataKeys,
  definitions: describeDefinitions,
  "transfer-rows": describeTransferRows,
  "worker-presence": describeWorkerPresence,
  wakeups: describeWakeups,
  tallies: describeTallies,
  retention: describeRetention,
} as const;

/** A concern of the suite: one port's (or one behaviour's) cases. */
export type ConformanceConcern = keyof typeof CONCERNS;
export const CONFORMANCE_CONCERNS = Object.keys(CONCERNS) as ConformanceConcern[];

/**
 * Which concerns to run (langgraph's `specTest(initializer, filters)` shape): `only` runs those
 * alone (a store that implements a subset of the ports, or the inner loop on one concern);
 * `skip` leaves concerns out, each with the reason, which its skipped case's title says.
 */
export interface ConformanceFilters {
  only?: readonly ConformanceConcern[];
  skip?: Partial<Record<ConformanceConcern, string>>;
}

/** Every concern's cases (or those `filters` keep), in one `describe` named for the store. */
export function describeStoreConformance(factory: StoreFactory, api: ConformanceTestApi, filters: ConformanceFilters = {}): void {
  const unknown = [...(filters.only ?? []), ...Object.keys(filters.skip ?? {})].filter((c) => !(c in CONCERNS));
  if (unknown.length > 0) throw new Error(`conformance filters name no concern ${unknown.map((c) => JSON.stringify(c)).join(", ")}: the concerns are ${CONFORMANCE_CONCERNS.join(", ")}`);
  const timeout = factory.caseTimeoutMs;
  const it = Object.assign((name: string, fn: () => Promise<void>) => (timeout === undefined ? api.it(name, fn) : api.it(name, fn, timeout)), {
    skip: (name: string, fn: () => Promise<void>) => api.it.skip(name, fn),
  });
  const t: ConformanceTestApi = { ...api, it };
  t.describe(`Store conformance: ${factory.name}`, () => {
    const h = new Harness(factory, t.expect);
    t.beforeEach(() => h.open());
    t.afterEach(() => h.dispose());
    for (const name of CONFORMANCE_CONCERNS) {
      if (filters.only && !filters.only.includes(name)) continue;
      const why = filters.skip?.[name];
      if (why !== undefined) t.it.skip(`${name}: skipped (${why})`, () => Promise.resolve());
      else CONCERNS[name](t, h);
    }
  });
}
