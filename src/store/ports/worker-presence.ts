/**
 * Worker presence in a store shared by many hosts: a worker known to be gone loses its leases at
 * once instead of when they expire. Optional in `Store`: a store has both methods or neither.
 */

/** A worker's presence in a shared store (see {@link WorkerPresence.attachWorker}). */
export interface WorkerAttachment {
  /** Settles when the presence is lost (its connection dropped): the worker must stop its runs at once. */
  lost: Promise<unknown>;
  detach(): Promise<void>;
}

export interface WorkerPresence {
  /**
   * Registers a worker's presence for as long as the returned attachment lives (a worker must
   * attach before it claims), and calls `onWake` when a run may have become runnable (a lost
   * wake-up only delays: workers still poll).
   */
  attachWorker(workerId: string, onWake: () => void): Promise<WorkerAttachment>;

  /** Ends the leases of owners whose presence is gone; returns their run ids. */
  expireGoneOwners(): Promise<string[]>;
}
