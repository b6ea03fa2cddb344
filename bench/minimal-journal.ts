import { join } from "node:path";
import Database from "better-sqlite3";
import { stepResult } from "./report.js";

/**
 * The minimal journal: the least a durable step journal can do, as a reference for Stead's per-step
 * cost. A run's steps are rows keyed by (run, position); a step is replayed from its row or run
 * and written in one insert, acknowledged once durable. No leases, fences, events, retries,
 * duplicate-id checks or payload checks. `group`: steps of concurrent runs share one transaction,
 * flushed once the event loop has nothing else to do (as Stead's group commit does).
 */
export class MinimalJournal {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement;
  private readonly read: Database.Statement;
  private batch: { run: string; seq: number; id: string; output: string }[] = [];
  private flushed: Promise<void> | undefined;

  constructor(dir: string, synchronous: "FULL" | "NORMAL", private readonly group: boolean) {
    this.db = new Database(join(dir, "minimal.db"));
    this.db.pragma("journal_mode = WAL");
    this.db.pragma(`synchronous = ${synchronous}`);
    this.db.exec("CREATE TABLE steps (run_id TEXT NOT NULL, seq INTEGER NOT NULL, step_id TEXT NOT NULL, output TEXT NOT NULL, PRIMARY KEY (run_id, seq))");
    this.insert = this.db.prepare("INSERT INTO steps (run_id, seq, step_id, output) VALUES (?, ?, ?, ?)");
    this.read = this.db.prepare("SELECT seq, output FROM steps WHERE run_id = ?");
  }

  /** A run's cursor over its recorded steps. */
  open(run: string): { run: string; next: number; recorded: Map<number, string> } {
    const rows = this.read.all(run) as { seq: number; output: string }[];
    return { run, next: 0, recorded: new Map(rows.map((r) => [r.seq, r.output])) };
  }

  async step<T>(cursor: { run: string; next: number; recorded: Map<number, string> }, id: string, fn: () => T | Promise<T>): Promise<T> {
    const seq = cursor.next++;
    const recorded = cursor.recorded.get(seq);
    if (recorded !== undefined) return JSON.parse(recorded) as T;
    const value = await fn();
    const output = JSON.stringify(value);
    if (!this.group) this.insert.run(cursor.run, seq, id, output);
    else await this.queue({ run: cursor.run, seq, id, output });
    return JSON.parse(output) as T;
  }

  private queue(row: { run: string; seq: number; id: string; output: string }): Promise<void> {
    this.batch.push(row);
    this.flushed ??= new Promise<void>((resolve) =>
      setImmediate(() => {
        const rows = this.batch;
        this.batch = [];
        this.flushed = undefined;
        this.db.transaction(() => {
          for (const r of rows) this.insert.run(r.run, r.seq, r.id, r.output);
        })();
        resolve();
      }),
    );
    return this.flushed;
  }

  close(): void {
    this.db.close();
  }
}

/** W1 on the minimal journal: µs per step of one run of `steps` ~1 KB steps in sequence. */
export async function minimalSequential(dir: string, steps: number, synchronous: "FULL" | "NORMAL"): Promise<number> {
  const journal = new MinimalJournal(dir, synchronous, false);
  try {
    const cursor = journal.open("run-1");
    const t0 = performance.now();
    for (let i = 0; i < steps; i++) await journal.step(cursor, `s-${i}`, () => stepResult(i));
    return ((performance.now() - t0) * 1000) / steps;
  } finally {
    journal.close();
  }
}

/** W2 on the minimal journal with group commit: steps/s of `runs` concurrent runs of `steps` steps. */
export async function minimalConcurrent(dir: string, runs: number, steps: number): Promise<number> {
  const journal = new MinimalJournal(dir, "FULL", true);
  try {
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: runs }, async (_, r) => {
        const cursor = journal.open(`run-${r}`);
        for (let i = 0; i < steps; i++) await journal.step(cursor, `s-${i}`, () => stepResult(i));
      }),
    );
    return (runs * steps * 1000) / (performance.now() - t0);
  } finally {
    journal.close();
  }
}
