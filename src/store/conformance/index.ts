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

/** Every concern's cases, in one `describe` named for the store. */
export function describeStoreConformance(factory: StoreFactory, api: ConformanceTestApi): void {
  const timeout = factory.caseTimeoutMs;
  const it = Object.assign((name: string, fn: () => Promise<void>) => (timeout === undefined ? api.it(name, fn) : api.it(name, fn, timeout)), {
    skip: (name: string, fn: () => Promise<void>) => api.it.skip(name, fn),
  });
  const t: ConformanceTestApi = { ...api, it };
  t.describe(`Store conformance: ${factory.name}`, () => {
    const h = new Harness(factory, t.expect);
    t.beforeEach(() => h.open());
    t.afterEach(() => h.dispose());
    describeLifecycle(t, h);
    describeRuns(t, h);
    describeRunListing(t, h);
    describeSnapshotsAndBlobs(t, h);
    describeEvents(t, h);
    describeEventStream(t, h);
    describeClaims(t, h);
    describeGuardedMutations(t, h);
    describeWrites(t, h);
    describeCheckpoints(t, h);
    describeLeases(t, h);
    describeTimersAndHolds(t, h);
    describeSessions(t, h);
    describeIdempotencyKeys(t, h);
    describeTokens(t, h);
    describeDataKeys(t, h);
    describeDefinitions(t, h);
    describeTransferRows(t, h);
    describeWorkerPresence(t, h);
    describeWakeups(t, h);
    describeTallies(t, h);
    describeRetention(t, h);
  });
}
