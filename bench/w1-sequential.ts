import type { SteadOptions, Store } from "../src/index.js";
import { timeCommits } from "./commit-timer.js";
import { stead as lib, stores } from "./lib.js";
import { stepResult } from "./report.js";

const clock = { first: 0, last: 0 };

/** One run of `steps` sequential steps, each returning ~1 KB of JSON. */
export const sequential = lib.workflow("bench-w1-sequential", async (ctx, input: { steps: number }) => {
  clock.first = performance.now();
  for (let i = 0; i < input.steps; i++) await ctx.step(`s-${i}`, () => stepResult(i));
  clock.last = performance.now();
  return { steps: input.steps };
});

export interface SequentialResult {
  usPerStep: number;
  /** Of usPerStep, the time spent inside store.commit (per step); NaN unless asked for. */
  commitUsPerStep: number;
  transactions: number;
}

/**
 * Time per step of one run executed by a worker with default settings, on a store given by its
 * location (an SQLite path or a postgres:// URL) or as an object. `timeCommits` splits the figure
 * into store and engine time, at the cost of one more promise per commit.
 */
export async function steadSequential(
  store: string | Store,
  steps: number,
  options: { timeCommits?: boolean; encryption?: SteadOptions["encryption"]; synchronous?: "FULL" | "NORMAL" } = {},
): Promise<SequentialResult> {
  const where = options.synchronous && typeof store === "string" ? stores.openSqliteStore({ path: store, synchronous: options.synchronous }) : store;
  const stead = lib.createStead({ store: where, ...(options.encryption ? { encryption: options.encryption } : {}) });
  try {
    const { id } = await stead.runs.start(sequential, { steps });
    const worker = stead.worker({ definitions: [sequential], concurrency: 1 });
    const outcome = new Promise<string>((resolve) => worker.on("outcome", (runId, o) => runId === id && resolve(o.kind)));
    const commits = options.timeCommits ? timeCommits(stead.store) : { ms: NaN, calls: 0 };
    worker.start();
    const kind = await outcome;
    if (kind !== "completed") throw new Error(`W1 run ${id} ended ${kind}, not completed`);
    return {
      usPerStep: ((clock.last - clock.first) * 1000) / steps,
      commitUsPerStep: (commits.ms * 1000) / steps,
      transactions: worker.commitStats.transactions,
    };
  } finally {
    await stead.close();
  }
}
