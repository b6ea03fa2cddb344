/**
 * The read statements both SQL stores share, written once with `?` placeholders: each store passes
 * them (or a query built here) through its dialect (`dialect.ts`) and binds the same parameters.
 */
import type { EventFilter, HoldFilter, RunFilter } from "../types.js";
import { indexPredicate } from "../schema/tables.js";
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

/** The WHERE clause of a run filter (listRuns and countRuns share it). */
function runsWhere(d: SqlDialect, filter: Omit<RunFilter, "limit">): Query {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.status?.length) {
    const any = d.anyOf("status", filter.status);
    where.push(any.sql);
    params.push(any.param);
  }
  for (const [column, value] of [["definition", filter.definition], ["parent_id", filter.parentId], ["session_id", filter.sessionId]] as const) {
    if (value === undefined) continue;
    where.push(`${column} = ?`);
    params.push(value);
  }
  return { sql: where.length ? `WHERE ${where.join(" AND ")}` : "", params };
}

/** A session's turns by turn; otherwise newest first. */
export function listRuns(d: SqlDialect, filter: RunFilter): Query {
  const w = runsWhere(d, filter);
  const order = filter.sessionId !== undefined ? "turn" : "created_at DESC, id DESC";
  return { sql: d.text(`SELECT * FROM runs ${w.sql} ORDER BY ${order} LIMIT ?`), params: [...w.params, filter.limit ?? 1000] };
}

/** One row, `n`. */
export function countRuns(d: SqlDialect, filter: Omit<RunFilter, "limit">): Query {
  const w = runsWhere(d, filter);
  return { sql: d.text(`SELECT COUNT(*) AS n FROM runs ${w.sql}`), params: w.params };
}

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
