/**
 * Wake-ups within one process. Optional in `Store`: a store whose workers hear of new work another
 * way (Postgres: LISTEN through `attachWorker`) or only by polling leaves it out.
 */
export interface Wakeups {
  /**
   * Calls `listener` after each committed write through this store object that may have made a
   * run claimable (store/mutation/wakes.ts), never for a write that rolled back or was refused.
   * Only writes of this object are heard: another process's (or another object's on the same
   * file) reach a worker at its next poll. Returns the function that unsubscribes.
   */
  onWake(listener: () => void): () => void;
}
