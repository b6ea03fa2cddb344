import type { CommitOptions, Store, Unit, UnitResult } from "../store/types.js";

interface Pending {
  unit: Unit;
  resolve: (r: UnitResult) => void;
  reject: (e: unknown) => void;
}

/**
 * Group commit: units queued while a transaction is being written share the next transaction.
 * Each caller's promise resolves only after the transaction holding its unit is durable, so a run
 * never continues past a step whose outcome could still be lost.
 */
export class GroupCommitter {
  private queue: Pending[] = [];
  private flushing = false;
  private flushed: Promise<void> = Promise.resolve();
  /** Transactions written and units carried, for benchmarks and `stead worker` stats. */
  readonly stats = { transactions: 0, units: 0 };

  constructor(
    private readonly store: Store,
    private readonly options: { maxBatch?: number; beforeCommit?: (units: Unit[]) => void } = {},
  ) {}

  commit(unit: Unit): Promise<UnitResult> {
    return new Promise<UnitResult>((resolve, reject) => {
      this.queue.push({ unit, resolve, reject });
      if (!this.flushing) {
        this.flushing = true;
        // Let every run that is ready in this turn of the event loop queue its unit first.
        this.flushed = new Promise<void>((done) => setImmediate(() => void this.flush().then(done)));
      }
    });
  }

  /** Resolves once every unit queued so far has been written (or refused): before the store closes. */
  drain(): Promise<void> {
    return this.flushed;
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.options.maxBatch ?? 500);
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
    }
    this.flushing = false;
  }
}
