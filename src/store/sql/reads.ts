/**
 * The read statements both SQL stores share, written once with `?` placeholders: each store passes
 * them (or a query built here) through its dialect (`dialect.ts`) and binds the same parameters.
 */
import type { EventFilter, HoldFilter } from "../types.js";
import { indexPredicate } from "../schema/tables.js";
import { DEFINITIONS_ORDER } from "../announcement-records.js";
import type { SqlDialect } from "./dialect.js";

export interface Query {
  sql: string;
  params: unknown[];
}

export const RUN_BY_ID = "SELECT * FROM runs WHERE id = ?";
export const JOURNAL = "SELECT * FROM steps WHERE run_id = ? ORDER BY seq";
export const WAITS_OF_RUN = "SELECT * FROM waits WHERE run_id = ? ORDER BY seq";
/** Parameters: now, limit. The predicate is waits_wake's, so the partial index serves it. */
export const DUE_TIMERS = `SELECT * FROM waits WHERE ${indexPredicate("waits", "waits_wake")} AND wake_at <= ? ORDER BY wake_at LIMIT ?`;
/** Parameter: worker id. A worker's announcements, withdrawn (it stops, or announces anew). */
export const FORGET_ANNOUNCEMENTS = "DELETE FROM announcements WHERE worker_id = ?";
/** The definitions catalog, optionally `WHERE name = ?` (parameter: name), in its one order. */
export const definitionsSql = (byName: boolean): string => `SELECT * FROM definitions ${byName ? "WHERE name = ?" : ""} ${DEFINITIONS_ORDER}`;

/** An idempotency key still live at the store's clock. */
export function liveIdempotencyKey(d: SqlDialect, verb: string, scope: string, key: string, now: number): Query {
  const clock = d.clock(now);
  return { sql: `SELECT * FROM idempotency_keys WHERE verb = ? AND scope = ? AND key = ? AND expires_at > ${clock.sql}`, params: [verb, scope, key, ...clock.params] };
}

export const LEASES_ON_HOST = "SELECT id, fence, lease_owner, owner_host, owner_pid, owner_start, lease_expires_at FROM runs WHERE status = 'running' AND owner_host = ?";
export const SNAPSHOTS_OF_RUN = "SELECT * FROM snapshots WHERE run_id = ? ORDER BY seq, id";
/** The start/step snapshot at a journal position (settle snapshots are never the one "at" it). */
export const SNAPSHOT_AT_SEQ = "SELECT * FROM snapshots WHERE run_id = ? AND seq = ? AND source <> 'settle'";
export const SNAPSHOT_OF_STEP = "SELECT * FROM snapshots WHERE run_id = ? AND step_id = ? AND source = 'step' ORDER BY seq DESC LIMIT 1";
export const SNAPSHOT_ROOTS = "SELECT DISTINCT root FROM snapshots";
/** Parameter: a list of hashes (bound by the dialect's anyOf). */
export const blobsByHash = (d: SqlDialect, hashes: readonly string[]): Query => {
  const any = d.anyOf("hash", hashes);
  return { sql: `SELECT hash, size, data FROM blobs WHERE ${any.sql}`, params: [any.param] };
};

export function holds(d: SqlDialect, filter: HoldFilter): Query {
  const where: string[] = [];
  const params: unknown[] = [];
  for (const [column, value] of [["run_id", filter.runId], ["status", filter.status], ["kind", filter.kind]] as const) {
    if (value === undefined) continue;
    where.push(`${column} = ?`);
    params.push(value);
  }
  return { sql: d.text(`SELECT * FROM holds ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id`), params };
}

export function events(d: SqlDialect, filter: EventFilter): Query {
  const where = ["seq > ?"];
  const params: unknown[] = [filter.afterSeq ?? 0];
  if (filter.runId !== undefined) {
    where.push("run_id = ?");
    params.push(filter.runId);
  }
  params.push(filter.limit ?? 10_000);
  return { sql: d.text(`SELECT * FROM events WHERE ${where.join(" AND ")} ORDER BY seq LIMIT ?`), params };
}
