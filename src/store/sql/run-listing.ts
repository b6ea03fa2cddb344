/**
 * The statements of a run listing (store/listing-cursor.ts checks the query), for both SQL stores.
 * Each promised shape is one index walk in the page's order, stopped after the page (the indexes
 * and the query each serves are listed in store/README.md; test/store.run-listing-plans.test.ts
 * EXPLAINs them):
 * - one equality filter at most among status, definition, sessionId, parentId, with a range on
 *   the sort key: an index (filter column, sort key, id), or (sort key, id) without a filter;
 * - several statuses: one such walk per status, each stopped after the page, merged (UNION ALL of
 *   per-status branches: neither planner merges an IN list's ranges in order by itself); Postgres
 *   may instead walk the sort key's own index checking the status (its choice, by statistics);
 * - an id prefix: a range on an index of id (SQLite's key, Postgres's runs_id_pattern), its
 *   matches then sorted; the sort key is written `key + 0` so no planner walks the sort index
 *   hoping to meet the prefix soon (run ids are time-ordered: a prefix of old runs would be met last).
 * Other filters are checked on the rows the walk visits.
 */
import type { HoldRow, RunActivity, StepKind, StepStatus, WaitRow } from "../records.js";
import type { CheckedFilter, CheckedQuery } from "../listing-cursor.js";
import type { SqlDialect } from "./dialect.js";
import type { Query } from "./reads.js";

const KEY_COLUMN = { createdAt: "created_at", updatedAt: "updated_at" } as const;

/** Every condition but the status, and their parameters. */
function conditions(d: SqlDialect, f: CheckedFilter): { sql: string[]; params: unknown[] } {
  const sql: string[] = [];
  const params: unknown[] = [];
  const add = (text: string, value: unknown) => {
    sql.push(text);
    params.push(value);
  };
  if (f.definition !== undefined) add("definition = ?", f.definition);
  if (f.sessionId !== undefined) add("session_id = ?", f.sessionId);
  if (f.parentId !== undefined) add("parent_id = ?", f.parentId);
  if (f.createdSince !== undefined) add("created_at >= ?", f.createdSince);
  if (f.createdBefore !== undefined) add("created_at < ?", f.createdBefore);
  if (f.updatedSince !== undefined) add("updated_at >= ?", f.updatedSince);
  if (f.updatedBefore !== undefined) add("updated_at < ?", f.updatedBefore);
  if (f.idRange) {
    add(d.bytewise("id", ">="), f.idRange.from);
    if (f.idRange.to !== null) add(d.bytewise("id", "<"), f.idRange.to);
  }
  return { sql, params };
}

const where = (parts: readonly string[]): string => (parts.length ? ` WHERE ${parts.join(" AND ")}` : "");

/** One page and one run more (which says whether a next page exists). */
export function listRunsQuery(d: SqlDialect, q: CheckedQuery): Query {
  const key = KEY_COLUMN[q.sort];
  const dir = q.order === "desc" ? "DESC" : "ASC";
  const c = conditions(d, q.filter);
  if (q.after) {
    c.sql.push(`(${key}, id) ${q.order === "desc" ? "<" : ">"} (?, ?)`);
    c.params.push(q.after.key, q.after.id);
  }
  const fetch = q.limit + 1;
  const branchOrder = `ORDER BY ${q.filter.idRange ? `${key} + 0` : key} ${dir}, id ${dir}`;
  const statuses = q.filter.statuses;
  if (statuses.length <= 1) {
    const parts = statuses.length === 1 ? ["status = ?", ...c.sql] : c.sql;
    const params = statuses.length === 1 ? [statuses[0], ...c.params] : c.params;
    return { sql: d.text(`SELECT * FROM runs${where(parts)} ${branchOrder} LIMIT ?`), params: [...params, fetch] };
  }
  const order = `ORDER BY ${key} ${dir}, id ${dir}`;
  if (d.capabilities.mergesCompoundByIndex && !q.filter.idRange) {
    // SQLite merges a compound's branches in its ORDER BY, each walking its index as a
    // co-routine, and stops at the LIMIT; a branch written as an ordered subquery would be sorted again.
    const branches = statuses.map(() => `SELECT * FROM runs${where(["status = ?", ...c.sql])}`);
    return { sql: d.text(`${branches.join(" UNION ALL ")} ${order} LIMIT ?`), params: [...statuses.flatMap((s) => [s, ...c.params]), fetch] };
  }
  // Postgres merges branches that are each limited (Merge Append of Limit over an index scan).
  const branches = statuses.map((_, i) => `SELECT * FROM (SELECT * FROM runs${where(["status = ?", ...c.sql])} ${branchOrder} LIMIT ?) AS b${i}`);
  return { sql: d.text(`${branches.join(" UNION ALL ")} ${order} LIMIT ?`), params: [...statuses.flatMap((s) => [s, ...c.params, fetch]), fetch] };
}

/** One row, `n`. */
export function countRunsQuery(d: SqlDialect, f: CheckedFilter): Query {
  const c = conditions(d, f);
  if (f.statuses.length > 0) {
    const any = d.anyOf("status", f.statuses);
    c.sql.unshift(any.sql);
    c.params.unshift(any.param);
  }
  return { sql: d.text(`SELECT COUNT(*) AS n FROM runs${where(c.sql)}`), params: c.params };
}

/**
 * Each run's last journal entry, small fields only (its payloads may be large): one backward probe
 * of the journal's key per run. Postgres gets a LATERAL ... LIMIT 1 so that no planner, finding
 * the steps table small, joins it whole; SQLite (no LATERAL) looks each entry up by its full key.
 */
export function lastStepsQuery(d: SqlDialect, runIds: readonly string[]): Query {
  const t = d.idTable(runIds);
  const columns = "s.run_id, s.seq, s.step_id, s.kind, s.status, s.attempt";
  const sql =
    d.capabilities.lateral
      ? `SELECT ${columns} FROM ${t.sql} AS j
         CROSS JOIN LATERAL (SELECT run_id, seq, step_id, kind, status, attempt FROM steps WHERE run_id = j.id ORDER BY seq DESC LIMIT 1) AS s`
      : `SELECT ${columns} FROM ${t.sql} AS j
         JOIN steps s ON s.run_id = j.id AND s.seq = (SELECT max(m.seq) FROM steps m WHERE m.run_id = j.id)`;
  return { sql: d.text(sql), params: [t.param] };
}

/** Each run's latest event time: one backward probe of events_run per run. */
export function lastEventsQuery(d: SqlDialect, runIds: readonly string[]): Query {
  const t = d.idTable(runIds);
  return {
    sql: d.text(`SELECT j.id AS run_id, (SELECT e.at FROM events e WHERE e.run_id = j.id ORDER BY e.seq DESC LIMIT 1) AS at FROM ${t.sql} AS j`),
    params: [t.param],
  };
}

export function openWaitsQuery(d: SqlDialect, runIds: readonly string[]): Query {
  const any = d.anyOf("run_id", runIds);
  return { sql: d.text(`SELECT * FROM waits WHERE ${any.sql} AND status = 'open' ORDER BY run_id, seq, name`), params: [any.param] };
}

export function openHoldsQuery(d: SqlDialect, runIds: readonly string[]): Query {
  const any = d.anyOf("run_id", runIds);
  return { sql: d.text(`SELECT * FROM holds WHERE ${any.sql} AND status = 'open' ORDER BY id`), params: [any.param] };
}

/** From the journal's end, so an agent's final model step (an output reference's usual target) is met first. */
export const COMPLETED_STEP = "SELECT * FROM steps WHERE run_id = ? AND step_id = ? AND status = 'completed' ORDER BY seq DESC LIMIT 1";

type Raw = Record<string, unknown>;

/** The four reads' rows as one RunActivity per id, in the ids' order. */
export function assembleActivity(runIds: readonly string[], rows: { steps: Raw[]; events: Raw[]; waits: WaitRow[]; holds: HoldRow[] }): RunActivity[] {
  const steps = new Map(rows.steps.map((r) => [String(r.run_id), r]));
  const events = new Map(rows.events.map((r) => [String(r.run_id), r.at === null || r.at === undefined ? null : Number(r.at)]));
  return runIds.map((runId) => {
    const s = steps.get(runId);
    return {
      runId,
      lastStep: s
        ? { runId, seq: Number(s.seq), stepId: String(s.step_id), kind: String(s.kind) as StepKind, status: String(s.status) as StepStatus, attempt: Number(s.attempt) }
        : null,
      lastEventAt: events.get(runId) ?? null,
      openWaits: rows.waits.filter((w) => w.runId === runId),
      openHolds: rows.holds.filter((h) => h.runId === runId),
    };
  });
}
