/**
 * Whole sets of runs that callers need entire (a run's children, a session's turns), read through
 * the paged listing: a set of any size comes back whole, never cut at a page.
 */
import { damageRefusal } from "./damage.js";
import type { RunReads } from "./ports/run-reads.js";
import type { RunFilter, RunRow } from "./records.js";
import { MAX_PAGE_SIZE } from "./listing-cursor.js";

/**
 * Every run matching `filter`, oldest first. A run listed `damaged` refuses the whole set: its
 * callers read the runs' payloads (a session's history), and a set with a hole would mislead.
 */
export async function everyRun(reads: Pick<RunReads, "listRuns">, filter: RunFilter): Promise<RunRow[]> {
  const out: RunRow[] = [];
  for (let cursor: string | undefined; ; ) {
    const page = await reads.listRuns({ ...filter, sort: "createdAt", order: "asc", limit: MAX_PAGE_SIZE, ...(cursor === undefined ? {} : { cursor }) });
    const damaged = page.runs.find((r) => r.damaged);
    if (damaged?.damaged) throw damageRefusal(damaged.damaged, { runId: damaged.id });
    out.push(...page.runs);
    if (page.nextCursor === null) return out;
    cursor = page.nextCursor;
  }
}

/** A run's children (runs whose parentId is `parentId`), oldest first. */
export const childRuns = (reads: Pick<RunReads, "listRuns">, parentId: string): Promise<RunRow[]> => everyRun(reads, { parentId });

/** A session's turns by turn number (its order: turns are created in it, but clocks of different hosts may disagree). */
export async function sessionTurns(reads: Pick<RunReads, "listRuns">, sessionId: string): Promise<RunRow[]> {
  return (await everyRun(reads, { sessionId })).sort((a, b) => (a.turn ?? 0) - (b.turn ?? 0));
}
