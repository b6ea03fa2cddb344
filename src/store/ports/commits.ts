/** Every change to runs: a new run, and units of guarded mutations applied all-or-nothing. */
import type { CommitOptions, EventWrite, IdempotencyWrite, NewRun, RunRow, Unit, UnitResult } from "../records.js";

export interface Commits {
  /** Largest number of units one commit() should carry (group commit splits bigger batches). */
  readonly maxUnitsPerCommit?: number;

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
