/**
 * Erasing what deletes freed from the store's own files (SQLite): retention and gc overwrite the
 * pages their deletes free, and a truncating checkpoint then copies those pages over the old ones
 * in the store file and empties the -wal. A connection still reading from before the deletes keeps
 * that checkpoint from finishing; until it finishes, the deleted rows' bytes are in the files.
 * Optional in `Store`: a Postgres store keeps deleted rows in its data files until its VACUUM.
 */

export interface EraseReport {
  /** Whether none of the freed pages' old bytes is left in the store file or its -wal. */
  erased: boolean;
  /** When not: the files that may still hold them, with their sizes, and why the erase waits. */
  pending?: { files: { path: string; bytes: number }[]; reason: string };
}

export interface StoreErasure {
  /**
   * Finishes the erase of what earlier deletes freed: the truncating checkpoint, tried again until
   * it succeeds or `waitMs` has passed. One that cannot finish in that time is recorded in the
   * store, for `finishErase` (any process's) to finish later.
   */
  eraseFreed(waitMs: number): Promise<EraseReport>;
  /**
   * Finishes an erase recorded as pending, without waiting for readers (a worker's sweeper asks at
   * every tick); cheap when none is. True when it finished one.
   */
  finishErase(): Promise<boolean>;
}
