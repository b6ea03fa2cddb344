/**
 * Retention: finished runs deleted once they are old enough, a run tree at a time. A tree is a
 * root run (no parent), every run below it, and, for a session's turn, the session's other turns
 * and theirs: a session is kept or deleted as a whole, since a turn's history is rebuilt from the
 * turns before it.
 */

export interface RetentionOptions {
  /** Only trees whose every run ended (status completed, failed or cancelled) before this time (ms). */
  endedBefore: number;
  /**
   * Keep each run's row (status, input, output, error, times), the steps its output refers to, and
   * its `run.pruned` event; delete the rest. A session's turns are never summarized (kept instead).
   */
  keepSummary: boolean;
  /** The time recorded in `run.pruned` events (ms). */
  at: number;
  /** With `keepSummary`: the steps a run's stored output refers to (and needs to be read), kept with it. */
  summaryKeeps?: (stored: { output: string | null; outputRefs: string | null }, runId: string) => readonly string[];
}

export interface RetentionResult {
  /**
   * Runs whose journal, events, waits, holds and snapshots were deleted (their rows too, unless kept
   * as a summary). Each keeps one event, `run.pruned`: event numbers are never reused.
   */
  runs: string[];
  /** Roots left alone, each with why: a run of its tree not finished, or finished too recently. */
  kept: { root: string; reason: string }[];
}

export interface RunRetention {
  /** Root runs (no parent) finished before `endedBefore`, in id order after `after`, at most `limit`. */
  finishedRoots(endedBefore: number, after: string | null, limit: number): Promise<string[]>;
  /**
   * Deletes the trees of `roots` in one transaction, each only if every run in it is finished and
   * ended before `options.endedBefore` as the transaction sees it (a run resumed meanwhile keeps
   * its tree). A tree already gone is skipped without a word.
   */
  deleteRunTrees(roots: readonly string[], options: RetentionOptions): Promise<RetentionResult>;
}
