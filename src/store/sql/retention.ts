/**
 * Retention's statements, the same text on both SQL stores (`?` placeholders; see dialect.ts).
 * Each store runs TREE for every root and the deletes in one transaction of its own.
 */
import { TERMINAL_SQL } from "../sessions-sql.js";
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
  SELECT r.id, r.status, r.updated_at FROM runs r JOIN tree t ON t.id = r.id ORDER BY r.id`;

/** A run's rows besides its own, in the order they are deleted. */
const RUN_ROWS = ["steps", "waits", "holds", "events", "snapshots"] as const;

export interface TreeRow {
  id: string;
  status: string;
  updatedAt: number;
}

export const toTreeRow = (r: Record<string, unknown>): TreeRow => ({ id: String(r.id), status: String(r.status), updatedAt: Number(r.updated_at) });

export interface Statement {
  sql: string;
  params: unknown[];
}

/** The statements that delete a tree's runs (or reduce each to its row and a `run.pruned` event), in order. */
export function treeWrites(tree: readonly TreeRow[], o: RetentionOptions): Statement[] {
  const out: Statement[] = [];
  const pruned = JSON.stringify({ by: "retention", endedBefore: o.endedBefore });
  for (const { id } of tree) {
    for (const t of RUN_ROWS) out.push({ sql: `DELETE FROM ${t} WHERE run_id = ?`, params: [id] });
    out.push(o.keepSummary ? { sql: "INSERT INTO events (run_id, type, at, data) VALUES (?, 'run.pruned', ?, ?)", params: [id, o.at, pruned] } : { sql: "DELETE FROM runs WHERE id = ?", params: [id] });
  }
  return out;
}

/** Why a tree must stay (undefined: it may go). */
export function mustKeep(tree: readonly TreeRow[], endedBefore: number): string | undefined {
  const open = tree.find((r) => !TERMINAL_STATUSES.includes(r.status as RunStatus));
  if (open) return `run ${open.id} is ${open.status}`;
  const recent = tree.find((r) => r.updatedAt >= endedBefore);
  if (recent) return `run ${recent.id} ended after the cut-off`;
  return undefined;
}
