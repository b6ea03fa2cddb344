/**
 * Retention on Postgres (ports/retention.ts): finished run trees found and deleted, each tree
 * locked (and its session's lock taken) before its check.
 */
import type { RetentionOptions, RetentionResult, RunRetention } from "../ports/retention.js";
import { POSTGRES_DIALECT as SQL } from "../sql/dialect.js";
import * as retention from "../sql/retention.js";
import type { PostgresConnection } from "./connection.js";
import { SESSION_LOCK_CLASS } from "./store-names.js";

type Raw = Record<string, unknown>;

export function postgresRetention(pg: PostgresConnection): RunRetention {
  return {
    async finishedRoots(endedBefore: number, after: string | null, limit: number): Promise<string[]> {
      return (await pg.query(SQL.text(retention.FINISHED_ROOTS), [endedBefore, after ?? "", limit])).map((r) => String(r.id));
    },
    deleteRunTrees(roots: readonly string[], options: RetentionOptions): Promise<RetentionResult> {
      return pg.transaction(async (c) => {
        const out: RetentionResult = { runs: [], kept: [] };
        const done = new Set<string>();
        for (const root of roots) {
          if (done.has(root)) continue;
          // The session's lock, as createRun takes it: no turn can be added while its turns go.
          const [head] = (await c.query<Raw>(SQL.text(retention.SESSION_OF), [root])).rows;
          if (typeof head?.session_id === "string") await c.query("SELECT pg_advisory_xact_lock($1::int, hashtext($2))", [SESSION_LOCK_CLASS, head.session_id]);
          // Locked, so no run of the tree can be resumed between the check and the deletes.
          const rows = (await c.query<Raw>(`${SQL.text(retention.TREE)} FOR UPDATE OF r`, [root, root])).rows;
          const tree = rows.map(retention.toTreeRow);
          if (tree.length === 0) continue;
          const why = retention.mustKeep(tree, options);
          if (why) {
            out.kept.push({ root, reason: why });
            continue;
          }
          for (const w of retention.treeWrites(tree, options)) await c.query(SQL.text(w.sql), w.params);
          for (const { id } of tree) done.add(id);
          out.runs.push(...tree.map((r) => r.id));
        }
        return out;
      });
    },
  };
}
