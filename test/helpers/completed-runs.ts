import { expect } from "vitest";
import type { Stead, WorkflowDefinition } from "../../src/index.js";
import { FAST_WORKER } from "./temp-store.js";

/**
 * Runs of `flow` (id, input) taken to `completed` by a worker of `stead`, then `then(stead)` while
 * it is still open; the worker is stopped and `stead` closed whatever happens. Each run's status
 * is asserted, so a seed that went wrong fails here, not in a later assertion about its rows.
 */
export async function completeRuns<I>(
  stead: Stead,
  flow: WorkflowDefinition<I, unknown>,
  runs: readonly (readonly [id: string, input: I])[],
  then?: (stead: Stead) => Promise<unknown>,
): Promise<void> {
  const w = stead.worker({ definitions: [flow], ...FAST_WORKER });
  w.start();
  try {
    for (const [id, input] of runs) await stead.runs.start(flow, input, { id });
    for (const [id] of runs) expect((await stead.runs.waitFor(id, { timeoutMs: 20_000 })).status, id).toBe("completed");
    await then?.(stead);
  } finally {
    await w.stop({ graceMs: 500 });
    await stead.close();
  }
}

/** `count` runs with ids `${prefix}0`… and inputs 0…, for completeRuns. */
export const numberedRuns = (prefix: string, count: number): [string, number][] => Array.from({ length: count }, (_, n) => [`${prefix}${n}`, n]);
