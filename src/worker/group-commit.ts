import type { CommitOptions, Commits, Unit, UnitResult } from "../store/types.js";

interface Pending {
  unit: Unit;
  /** Every run the unit names (a mutation's runId), in the unit's order. */
  runs: readonly string[];
  resolve: (r: UnitResult) => void;
  reject: (e: unknown) => void;
}

export interface GroupCommitOptions {
  maxBatch?: number;
  /**
   * How many transactions may be in flight at once (default 1; a store's `commitsInFlight`). With
   * more, what is queued is split between the free ones only where each part keeps at least half of
   * `maxBatch`, and fewer units than that wait for the transaction in flight: the runs one commit
   * answers then work while another is still being written, so a store whose commit is a round
   * trip away (Postgres) and the engine are not idle by turns, and a machine short of CPU does not
   * pay for many small transactions (measured: four flights of any size made 2 and 4 busy workers
   * 10-25% slower).
   */
  inFlight?: number;
  beforeCommit?: (units: Unit[]) => void;
}

/**
 * Group commit: units queued while a transaction is being written share the next transaction.
 * Each caller's promise resolves only after the transaction holding its unit is durable, so a run
 * never continues past a step whose outcome could still be lost.
 *
 * Invariant: the units of one run are written in the order they were queued. With several
 * transactions in flight, a unit naming a run that an unfinished transaction also names waits for
 * it, and so does every later unit naming that run.
 */
export class GroupCommitter {
  private queue: Pending[] = [];
  private scheduled = false;
  /** Transactions being written now. */
  private flights = 0;
  /** Runs named by a transaction being written, and how many such transactions name each. */
  private readonly busyRuns = new Map<string, number>();
  private idle: (() => void)[] = [];
  /** Transactions written and units carried, for benchmarks and `stead worker` stats. */
  readonly stats = { transactions: 0, units: 0 };
  private readonly maxBatch: number;
  private readonly maxFlights: number;
  /** The smallest batch a split of the queue makes. */
  private readonly minSplit: number;

  constructor(
    private readonly store: Commits,
    private readonly options: GroupCommitOptions = {},
  ) {
    this.maxBatch = Math.max(1, options.maxBatch ?? 500);
    // A hook between write and COMMIT (crash points) sees one transaction at a time.
    this.maxFlights = options.beforeCommit ? 1 : Math.max(1, Math.floor(options.inFlight ?? 1));
    this.minSplit = Math.ceil(this.maxBatch / 2);
  }

  commit(unit: Unit): Promise<UnitResult> {
    return new Promise<UnitResult>((resolve, reject) => {
      this.queue.push({ unit, runs: unit.map((m) => m.runId), resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // Let every run that is ready in this turn of the event loop queue its unit first.
        setImmediate(() => {
          this.scheduled = false;
          this.launch();
        });
      }
    });
  }

  /** Resolves once every unit queued so far has been written (or refused): before the store closes. */
  drain(): Promise<void> {
    if (this.queue.length === 0 && this.flights === 0) return Promise.resolve();
    return new Promise<void>((done) => this.idle.push(done));
  }

  /** Starts transactions while there is room for one and a unit free to go in it. */
  private launch(): void {
    while (this.flights < this.maxFlights && this.queue.length > 0) {
      // A few units wait for the transaction in flight rather than open one of their own.
      if (this.flights > 0 && this.queue.length < this.minSplit) break;
      const share = Math.ceil(this.queue.length / (this.maxFlights - this.flights));
      let size = Math.min(this.maxBatch, Math.max(this.minSplit, share));
      // A remainder under half a batch goes with this one rather than wait a round trip behind it.
      if (this.queue.length - size < this.minSplit) size = Math.min(this.maxBatch, this.queue.length);
      const batch = this.take(size);
      if (batch.length === 0) break;
      this.flights += 1;
      for (const p of batch) for (const r of p.runs) this.busyRuns.set(r, (this.busyRuns.get(r) ?? 0) + 1);
      void this.write(batch);
    }
  }

  /** The next batch of at most `size`, in queue order, leaving queued every unit that must wait for a run in flight. */
  private take(size: number): Pending[] {
    if (this.busyRuns.size === 0 && this.queue.length <= size) return this.queue.splice(0);
    const batch: Pending[] = [];
    const rest: Pending[] = [];
    const held = new Set<string>();
    for (const p of this.queue) {
      if (batch.length < size && !p.runs.some((r) => this.busyRuns.has(r) || held.has(r))) batch.push(p);
      else {
        rest.push(p);
        for (const r of p.runs) held.add(r);
      }
    }
    this.queue = rest;
    return batch;
  }

  /**
   * Writes one batch and answers its callers, then, in the same turn, starts the units queued while
   * it was written (not yet those its callers are about to queue: they join the next turn's batch).
   */
  private async write(batch: Pending[]): Promise<void> {
    const units = batch.map((p) => p.unit);
    const before = this.options.beforeCommit;
    const opts: CommitOptions = before ? { beforeCommit: () => before(units) } : {};
    try {
      const results = await this.store.commit(units, opts);
      this.stats.transactions += 1;
      this.stats.units += units.length;
      batch.forEach((p, i) => p.resolve(results[i] ?? { ok: false, reason: "missing", runId: p.unit[0]?.runId ?? "" }));
    } catch (e) {
      for (const p of batch) p.reject(e);
    }
    this.flights -= 1;
    for (const p of batch) {
      for (const r of p.runs) {
        const n = (this.busyRuns.get(r) ?? 1) - 1;
        if (n === 0) this.busyRuns.delete(r);
        else this.busyRuns.set(r, n);
      }
    }
    this.launch();
    if (this.queue.length === 0 && this.flights === 0) for (const done of this.idle.splice(0)) done();
  }
}
