import { deleteFinishedRuns, retentionAge } from "../engine/runs/retention.js";
import type { ClaimsAndLeases, Commits, DefinitionAnnouncements, IdempotencyKeys, RunReads, RunRetention, SnapshotsAndBlobs, StoreErasure, WorkerPresence } from "../store/types.js";
import { gcWorkspaces } from "../workspace/lazy.js";
import { ANNOUNCEMENT_RETENTION_MS } from "./announcer.js";
import { expireDeadOwners, wakeDueTimers } from "./sweeper.js";
import type { WorkerOptions } from "./worker-options.js";

/** How often the sweeper deletes expired idempotency keys. */
const KEY_PRUNE_MS = 10 * 60 * 1000;

/** The store ports the chores use. */
export type HousekeepingStore = ClaimsAndLeases &
  Commits &
  RunReads &
  RunRetention &
  SnapshotsAndBlobs &
  Pick<IdempotencyKeys, "pruneIdempotencyKeys"> &
  Pick<DefinitionAnnouncements, "pruneAnnouncements"> &
  Partial<Pick<WorkerPresence, "expireGoneOwners">> &
  Partial<Pick<StoreErasure, "finishErase">>;


/**
 * A worker's periodic chores, done at the start of a claim loop's tick: due timers woken, dead
 * and gone owners' leases ended, a pending erase finished, expired idempotency keys and lapsed
 * announcements pruned, and retention in the background.
 */
export class Housekeeping {
  private gcDueAt = 0;
  /** When expired idempotency keys were last deleted (the sweeper does it every KEY_PRUNE_MS). */
  private keysPrunedAt = 0;
  /** The retention pass in progress (stop() waits for it: it reads the store). */
  private gcPass: Promise<void> | undefined;

  constructor(
    private readonly store: HousekeepingStore,
    private readonly options: Pick<WorkerOptions, "retention" | "workspace">,
    /** This worker's host: leases of dead owners on it are ended. */
    private readonly host: () => string,
    /** A retention pass's failure (it runs in the background). */
    private readonly onError: (e: unknown) => void,
  ) {
    // A bad retention age is refused when the worker is made, not an hour later in the background.
    if (options.retention) retentionAge(options.retention.finishedBefore, "retention.finishedBefore");
  }

  /** The retention pass in progress, if any. */
  get settled(): Promise<void> | undefined {
    return this.gcPass;
  }

  /** One round of chores; a store fault is thrown to the tick (retention's are reported). */
  async sweep(): Promise<void> {
    await wakeDueTimers(this.store, Date.now());
    await expireDeadOwners(this.store, this.host());
    if (this.store.expireGoneOwners) await this.store.expireGoneOwners();
    // An erase a reader kept a gc from finishing (SQLite): done here once no one reads from before it.
    if (this.store.finishErase) await this.store.finishErase();
    if (Date.now() >= this.keysPrunedAt + KEY_PRUNE_MS) {
      this.keysPrunedAt = Date.now();
      await this.store.pruneIdempotencyKeys();
      await this.store.pruneAnnouncements(ANNOUNCEMENT_RETENTION_MS, Date.now());
    }
    this.retain();
  }

  /** Retention (finished runs, then workspace snapshots and blobs), in the background (it may read many trees): never two at once. */
  private retain(): void {
    const r = this.options.workspace?.retention;
    const runs = this.options.retention;
    if ((!r && !runs) || this.gcPass || Date.now() < this.gcDueAt) return;
    this.gcDueAt = Date.now() + (r?.everyMs ?? runs?.everyMs ?? 3_600_000);
    const pass = async () => {
      if (runs) await deleteFinishedRuns(this.store, runs);
      if (r) await gcWorkspaces(this.store, { keepSteps: r.keepSteps, ...(r.graceMs !== undefined ? { graceMs: r.graceMs } : {}) });
    };
    this.gcPass = pass()
      .then(
        () => undefined,
        (e: unknown) => this.onError(e),
      )
      .finally(() => (this.gcPass = undefined));
  }
}
