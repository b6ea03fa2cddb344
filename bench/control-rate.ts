import { join } from "node:path";
import { stead as lib } from "./lib.js";
import { parked } from "./parked-memory.js";

export const CALLERS = 50;

/** `total` calls of `call(i)` from `CALLERS` concurrent callers; calls per second. */
export async function concurrently(total: number, call: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      for (let i = next++; i < total; i = next++) await call(i);
    }),
  );
  return (total * 1000) / (performance.now() - t0);
}

type Stead = ReturnType<typeof lib.createStead>;

/** A worker takes each of the `runs` pending runs of `parked` to its approval, then stops. */
export async function parkAll(stead: Stead, runs: number): Promise<void> {
  const worker = stead.worker({ definitions: [parked], concurrency: 50, pollMs: 20 });
  let waiting = 0;
  const allParked = new Promise<void>((resolve, reject) =>
    worker.on("outcome", (id, o) => {
      if (o.kind !== "waiting") reject(new Error(`run ${id} ended ${o.kind} before its approval`));
      else if (++waiting === runs) resolve();
    }),
  );
  worker.start();
  await allParked;
  await worker.stop();
}

/**
 * Starts per second from 50 concurrent library callers in one process, on a fresh store; then
 * approvals per second of the same runs, once a worker has taken each to its approval.
 */
export async function controlRates(dir: string, runs: number): Promise<{ startsPerSec: number; approvalsPerSec: number }> {
  const stead = lib.createStead({ store: join(dir, "stead.db") });
  try {
    await stead.ready();
    const ids: string[] = [];
    const startsPerSec = await concurrently(runs, async () => ids.push((await stead.runs.start(parked, null)).id));
    await parkAll(stead, runs);
    const approvalsPerSec = await concurrently(runs, (i) => stead.runs.approve(ids[i] as string, "go"));
    const answered = await stead.runs.count({ status: ["pending"] });
    if (answered !== runs) throw new Error(`${answered} of ${runs} approved runs are pending again`);
    return { startsPerSec, approvalsPerSec };
  } finally {
    await stead.close();
  }
}
