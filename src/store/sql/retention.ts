/**
 * Retention's statements, the same text on both SQL stores (`?` placeholders; see dialect.ts).
 * Each store runs TREE for every root and the deletes in one transaction of its own.
 */
import { TERMINAL_SQL } from "./sessions.js";
import { TERMINAL_STATUSES, type RunStatus } from "../records.js";
import type { RetentionOptions } from "../ports/retention.js";

/** Roots finished before ?, after id ?, at most ?; a root already reduced to its summary (a `run.pruned` event) is done. */
export const FINISHED_ROOTS = `SELECT id FROM runs WHERE parent_id IS NULL AND status IN ${TERMINAL_SQL} AND updated_at < ? AND id > ?
  AND NOT EXISTS (SELECT 1 FROM events e WHERE e.run_id = runs.id AND e.type = 'run.pruned') ORDER BY id LIMIT ?`;

/** Every run of the tree of root ? (given twice): its session's other turns, and all their descendants. */
export const TREE = `WITH RECURSIVE heads(id) AS (
    SELECT id FROM runs WHERE id = ?
    UNION SELECT t.id FROM runs t JOIN runs h ON h.session_id = t.session_id WHERE h.id = ? AND t.parent_id IS NULL
  ), tree(id) AS (
    SELECT id FROM heads
    UNION SELECT c.id FROM runs c JOIN tree p ON c.parent_id = p.id
  )
  SELECT r.id, r.status, r.updated_at, r.session_id, r.output, r.output_refs FROM runs r JOIN tree t ON t.id = r.id ORDER BY r.id`;

/** The session of root ?, to take its lock (Postgres) before its turns are read. */
export const SESSION_OF = "SELECT session_id FROM runs WHERE id = ?";

export interface TreeRow {
  id: string;
  status: string;
  updatedAt: number;
  sessionId: string | null;
  output: string | null;
  outputRefs: string | null;
}

export const toTreeRow = (r: Record<string, unknown>): TreeRow => ({
  id: String(r.id),
  status: String(r.status),
  updatedAt: Number(r.updated_at),
  sessionId: typeof r.session_id === "string" ? r.session_id : null,
  output: typeof r.output === "string" ? r.output : null,
  outputRefs: typeof r.output_refs === "string" ? r.output_refs : null,
});

export type { Statement } from "./driver.js";
import type { Statement } from "./driver.js";

/**
 * The statements that delete a tree's runs (or reduce each to its row, the steps its output refers
 * to, and its `run.pruned` event), in order.
 *
 * Hazard: SQLite numbers a new event one past the highest there is, and an event stream position
 * must never be handed out twice; so each run's `run.pruned` event is inserted before its events
 * are deleted, and stays (a follower also learns from it that the run is gone).
 */
export function treeWrites(tree: readonly TreeRow[], o: RetentionOptions): Statement[] {
  const out: Statement[] = [];
  const pruned = JSON.stringify({ by: "retention", endedBefore: o.endedBefore, summary: o.keepSummary });
  for (const { id, output, outputRefs } of tree) {
    out.push({ sql: "INSERT INTO events (run_id, type, at, data) VALUES (?, 'run.pruned', ?, ?)", params: [id, o.at, pruned] });
    const keep = o.keepSummary ? [...new Set(o.summaryKeeps?.({ output, outputRefs }, id) ?? [])] : [];
    out.push(keep.length ? { sql: `DELETE FROM steps WHERE run_id = ? AND step_id NOT IN (${keep.map(() => "?").join(", ")})`, params: [id, ...keep] } : { sql: "DELETE FROM steps WHERE run_id = ?", params: [id] });
    for (const t of ["waits", "holds", "snapshots"]) out.push({ sql: `DELETE FROM ${t} WHERE run_id = ?`, params: [id] });
    out.push({ sql: "DELETE FROM events WHERE run_id = ? AND type <> 'run.pruned'", params: [id] });
    if (!o.keepSummary) out.push({ sql: "DELETE FROM runs WHERE id = ?", params: [id] });
  }
  return out;
}

/** Why a tree must stay (undefined: it may go). */
export function mustKeep(tree: readonly TreeRow[], o: Pick<RetentionOptions, "endedBefore" | "keepSummary">): string | undefined {
  const open = tree.find((r) => !TERMINAL_STATUSES.includes(r.status as RunStatus));
  if (open) return `run ${open.id} is ${open.status}`;
  const recent = tree.find((r) => r.updatedAt >= o.endedBefore);
  if (recent) return `run ${recent.id} ended after the cut-off`;
  // A summary keeps no turn's history, and a later turn would be rebuilt from it: a session goes whole or stays.
  const turn = o.keepSummary ? tree.find((r) => r.sessionId !== null) : undefined;
  if (turn) return `run ${turn.id} is a turn of session ${turn.sessionId ?? ""}, which is deleted whole, never reduced to a summary`;
  return undefined;
}
