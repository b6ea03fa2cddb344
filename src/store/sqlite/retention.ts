/**
 * Retention on SQLite (ports/retention.ts): finished run trees found and deleted, their freed
 * bytes overwritten (the connection's erasing).
 */
import type { RetentionOptions, RetentionResult, RunRetention } from "../ports/retention.js";
import type { SqliteConnection } from "./connection.js";
import * as retention from "../sql/retention.js";

type Raw = Record<string, unknown>;

export function sqliteRetention(c: SqliteConnection): RunRetention {
  return {
    finishedRoots(endedBefore: number, after: string | null, limit: number): Promise<string[]> {
      return c.read(() => (c.stmt(retention.FINISHED_ROOTS).all(endedBefore, after ?? "", limit) as Raw[]).map((r) => String(r.id)));
    },
    async deleteRunTrees(roots: readonly string[], options: RetentionOptions): Promise<RetentionResult> {
      const result = c.erasing(() =>
        c.db.transaction(() => {
          const out: RetentionResult = { runs: [], kept: [] };
          const done = new Set<string>();
          for (const root of roots) {
            if (done.has(root)) continue;
            const tree = (c.stmt(retention.TREE).all(root, root) as Raw[]).map(retention.toTreeRow);
            if (tree.length === 0) continue;
            const why = retention.mustKeep(tree, options);
            if (why) {
              out.kept.push({ root, reason: why });
              continue;
            }
            for (const w of retention.treeWrites(tree, options)) c.stmt(w.sql).run(...w.params);
            for (const { id } of tree) done.add(id);
            out.runs.push(...tree.map((r) => r.id));
          }
          return out;
        }).immediate(),
      );
      return Promise.resolve(result);
    },
  };
}
