/** Every change to runs: a new run, and units of guarded mutations applied all-or-nothing. */
import type { CommitOptions, EventWrite, IdempotencyWrite, NewRun, RunRow, Unit, UnitResult } from "../records.js";

export interface Commits {
  /** Largest number of units one commit() should carry (group commit splits bigger batches). */
  readonly maxUnitsPerCommit?: number;
  /**
   * How many commit() calls a worker may have in flight at once (default 1). Above 1 only for a
   * store that writes concurrent commits side by side, each serialised on the rows it touches
   * (Postgres); SQLite has one writer, and its commit holds the thread anyway.
   */
  readonly commitsInFlight?: number;

  /**
   * Inserts a run and its events; fails if the id exists, or (STEAD_IDEMPOTENCY_CONFLICT) if
   * `idempotency`'s key is recorded and unexpired. A run with a `sessionId` becomes the
   * session's next turn (1 + its highest turn), atomically across store instances and processes.
   * Returns the row as inserted.
   */
  createRun(run: NewRun, events: EventWrite[], idempotency?: IdempotencyWrite): Promise<RunRow>;

  /**
   * Applies units in one transaction (group commit). Each unit is all-or-nothing: a failed
   * precondition skips that unit only. Resolves after the transaction is durable.
   */
  commit(units: Unit[], options?: CommitOptions): Promise<UnitResult[]>;
}
