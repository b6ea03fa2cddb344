import type { Store } from "../types.js";

/**
 * How the conformance suite gets the store under test. Every case opens one (and some a second),
 * and disposes of each at its end, so cases never see each other's rows.
 */
export interface StoreFactory {
  /** Names the store in case titles. */
  readonly name: string;
  /** A fresh, migrated, empty store on storage of its own. */
  open(): Promise<Store>;
  /**
   * Another instance on the storage of `store` (an instance `open` returned), as a second process
   * would open it. The suite closes it before disposing of `store`. Absent: the cases on two
   * instances racing are skipped, saying why.
   */
  reopen?(store: Store): Promise<Store>;
  /** Closes `store` (it may be closed already) and removes its storage. */
  dispose(store: Store): Promise<void>;
  /**
   * True when the store implements worker presence (`attachWorker` and `expireGoneOwners`): the
   * suite checks the store agrees, then runs the cases on presence; otherwise they are skipped.
   */
  readonly workerPresence?: boolean;
  /**
   * True when the store implements in-process wake-ups (`onWake`, ports/wakeups.ts): the suite
   * checks the store agrees and runs the cases on them. A store with neither this nor worker
   * presence is polled only, and the wake-up cases are skipped, saying so.
   */
  readonly inProcessWakeups?: boolean;
  /**
   * For a store with worker presence (`attachWorker`): cuts, from the server's side, the
   * connection holding `workerId`'s presence, as a network failure or a killed process would.
   * Absent: the case on a lost presence is skipped, saying why.
   */
  dropPresence?(store: Store, workerId: string): Promise<void>;
  /**
   * How far the store's clock may be from this process's `Date.now()`, for a store whose
   * `leaseClock` is "store" (default 50 ms: a server on this host).
   */
  readonly clockToleranceMs?: number;
  /** Passed to `it` as each case's timeout (default: the runner's own). */
  readonly caseTimeoutMs?: number;
}
