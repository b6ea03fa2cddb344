/** What every control command (start, send, approve, …, fork) takes besides its own arguments. */
export interface ControlOptions {
  /** Who does it: recorded with the decision or event. */
  by?: string | null;
  /**
   * Makes the call safe to retry: a repeat with the same key (within `idempotencyTtlMs`) returns
   * the first call's result, `already: true`, and changes nothing; the same key with other
   * arguments is refused naming the first use. Scoped to the command and its run (or session, or
   * the definition for a start).
   */
  idempotencyKey?: string;
}
