/**
 * The claim rule, written once for both SQL stores: which runs a worker may take, and in what
 * order. A run is claimable when
 *   - its definition is one the worker serves (and, with `runIds`, it is one of those runs);
 *   - it is pending, or running with no lease or a lapsed one (`leaseLapsed`);
 *   - every earlier turn of its session has ended (`earlierTurnsEnded`: monotone, see there);
 * oldest first (created_at, then id), at most `limit`.
 *
 * What stays in each dialect, and why: how the candidates are taken. SQLite updates them one by
 * one inside an IMMEDIATE transaction (the file's write lock already serialises claims);
 * Postgres locks them `FOR UPDATE SKIP LOCKED` in one statement, so workers on other hosts claim
 * disjoint runs without waiting on each other. Later rules (pinning, concurrency keys, priority,
 * fairness) belong here, in `claimCandidates`, so both stores and `claimable` keep one rule.
 */
import { earlierTurnsEnded } from "./sessions.js";
import type { SqlDialect } from "./dialect.js";
import type { Query } from "./reads.js";

export interface ClaimFilter {
  definitions: readonly string[];
  runIds?: readonly string[] | undefined;
  limit: number;
  /** The caller's clock (ms), used where the store judges leases by the caller's clock. */
  now: number;
}

/** The alias the claim rule gives the candidate row (`runs ${CANDIDATE}`). */
export const CANDIDATE = "r0";

/**
 * A running run of `alias` whose lease is absent or lapsed at `clock` (a SQL time in ms): the
 * only condition under which a run that is `running` may be taken from its owner.
 */
export const leaseLapsed = (alias: string, clock: string): string => `(${alias}.lease_expires_at IS NULL OR ${alias}.lease_expires_at <= ${clock})`;

/** A lease still held at `clock`: the complement of leaseLapsed for a running, owned run. */
export const leaseHeld = (alias: string, clock: string): string => `(${alias}.lease_owner IS NOT NULL AND ${alias}.lease_expires_at > ${clock})`;

/**
 * The claimable runs' `columns` (of `runs ${CANDIDATE}`), oldest first, in `?` placeholders: pass
 * `sql` through the dialect's `text` (a caller appending to it keeps `?` too).
 */
export function claimCandidates(d: SqlDialect, columns: string, f: ClaimFilter): Query {
  const clock = d.clock(f.now);
  const defs = d.anyOf(`${CANDIDATE}.definition`, f.definitions);
  const only = f.runIds ? d.anyOf(`${CANDIDATE}.id`, f.runIds) : undefined;
  return {
    sql: `SELECT ${columns} FROM runs ${CANDIDATE}
    WHERE ${defs.sql}
      AND (${CANDIDATE}.status = 'pending' OR (${CANDIDATE}.status = 'running' AND ${leaseLapsed(CANDIDATE, clock.sql)}))
      AND ${earlierTurnsEnded(CANDIDATE)}
      ${only ? `AND ${only.sql}` : ""}
    ORDER BY ${CANDIDATE}.created_at, ${CANDIDATE}.id LIMIT ?`,
    params: [defs.param, ...clock.params, ...(only ? [only.param] : []), f.limit],
  };
}

/**
 * Ends a lease at once if the run still carries `fence` (its owner is gone): the lease lapses, so
 * the claim rule lets another worker take the run.
 */
export function endLease(d: SqlDialect, runId: string, fence: number, now: number): Query {
  const clock = d.clock(now);
  return { sql: `UPDATE runs SET lease_expires_at = 0, updated_at = ${clock.sql} WHERE id = ? AND fence = ? AND status = 'running'`, params: [...clock.params, runId, fence] };
}
