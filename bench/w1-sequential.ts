import { join } from "node:path";
import { stead as lib } from "./lib.js";
import { stepResult } from "./report.js";

const clock = { first: 0, last: 0 };

/** One run of `steps` sequential steps, each returning ~1 KB of JSON. */
export const sequential = lib.workflow("bench-w1-sequential", async (ctx, input: { steps: number }) => {
  clock.first = performance.now();
  for (let i = 0; i < input.steps; i++) await ctx.step(`s-${i}`, () => stepResult(i));
  clock.last = performance.now();
  return { steps: input.steps };
});

/** Time per step of one run executed by a worker on an SQLite store (synchronous=FULL, the default). */
export async function steadSequential(dir: string, steps: number): Promise<{ usPerStep: number; transactions: number }> {
  const stead = lib.createStead({ store: join(dir, "stead.db") });
  try {
    const { id } = await stead.start(sequential, { steps });
    const worker = stead.worker({ definitions: [sequential], concurrency: 1 });
    const outcome = new Promise<string>((resolve) => worker.on("outcome", (runId, o) => runId === id && resolve(o.kind)));
    worker.start();
    const kind = await outcome;
    if (kind !== "completed") throw new Error(`W1 run ${id} ended ${kind}, not completed`);
    return { usPerStep: ((clock.last - clock.first) * 1000) / steps, transactions: worker.commitStats.transactions };
  } finally {
    await stead.close();
  }
}
