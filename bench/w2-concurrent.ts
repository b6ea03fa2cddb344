import type { SteadOptions, Store } from "../src/index.js";
import { stead as lib } from "./lib.js";
import { stepResult } from "./report.js";

const clock = { first: Infinity, last: 0 };

export const concurrent = lib.workflow("bench-w2-concurrent", async (ctx, input: { steps: number }) => {
  clock.first = Math.min(clock.first, performance.now());
  for (let i = 0; i < input.steps; i++) await ctx.step(`s-${i}`, () => stepResult(i));
  clock.last = Math.max(clock.last, performance.now());
  return { steps: input.steps };
});

/**
 * `runs` runs of `steps` steps in one worker with concurrency `runs`, on a store given by its
 * location (an SQLite path or a postgres:// URL) or as an object: from the first run's first
 * step to the last run's last step. Every step still waits for its own durable commit; group
 * commit lets steps of different runs share one.
 */
export async function steadConcurrent(
  store: string | Store,
  runs: number,
  steps: number,
  encryption?: SteadOptions["encryption"],
): Promise<{ stepsPerSec: number; transactions: number; units: number }> {
  clock.first = Infinity;
  clock.last = 0;
  const stead = lib.createStead({ store, ...(encryption ? { encryption } : {}) });
  try {
    const ids = new Set<string>();
    for (let r = 0; r < runs; r++) ids.add((await stead.runs.start(concurrent, { steps })).id);
    const worker = stead.worker({ definitions: [concurrent], concurrency: runs });
    const failures: string[] = [];
    const allDone = new Promise<void>((resolve) => {
      let left = ids.size;
      worker.on("outcome", (runId, o) => {
        if (!ids.has(runId)) return;
        if (o.kind !== "completed") failures.push(`${runId}: ${o.kind}`);
        if (--left === 0) resolve();
      });
    });
    worker.start();
    await allDone;
    if (failures.length) throw new Error(`W2 runs did not complete: ${failures.join(", ")}`);
    const stats = worker.commitStats;
    return { stepsPerSec: (runs * steps * 1000) / (clock.last - clock.first), transactions: stats.transactions, units: stats.units };
  } finally {
    await stead.close();
  }
}
