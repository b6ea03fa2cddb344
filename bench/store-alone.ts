/**
 * The SQLite store alone, without the engine: W1's and W2's step commits as the engine writes
 * them (a step row, lost claims 0, a `step.completed` event, under the run's lease), handed to
 * `SqliteStore.commit` in a loop. What it costs is the floor the store puts under W1 and W2;
 * W1 or W2 minus it is the engine's share. It is set against the minimal journal like W1 and W2.
 */
import { join } from "node:path";
import type { Mutation, Owner, Store } from "../src/store/types.js";
import { stores } from "./lib.js";
import { stepResult } from "./report.js";

const OWNER: Owner = { workerId: "bench-store-alone", host: "bench", pid: process.pid, start: "bench" };

/** A step's commit as step-runner.ts writes it. */
function stepCommit(runId: string, fence: number, seq: number): Mutation {
  const at = Date.now();
  return {
    runId,
    expect: { lease: { fence, owner: OWNER.workerId } },
    steps: [{ seq, stepId: `s-${seq}`, kind: "step", status: "completed", attempt: 1, output: JSON.stringify(stepResult(seq)), startedAt: at, completedAt: at }],
    run: { lostClaims: 0 },
    events: [{ type: "step.completed", data: { step: `s-${seq}`, seq, attempt: 1, ms: 0 } }],
  };
}

async function claimedRuns(store: Store, runs: number): Promise<{ id: string; fence: number }[]> {
  await store.migrate();
  const ids: string[] = [];
  for (let r = 0; r < runs; r++) {
    const id = `bench-store-alone-${r}`;
    await store.createRun({ id, definition: "bench-store-alone", module: null, fingerprint: "fp", input: "{}", createdAt: Date.now() }, [{ type: "run.created" }]);
    ids.push(id);
  }
  const claimed = await store.claim({ owner: OWNER, definitions: ["bench-store-alone"], limit: runs, leaseMs: 600_000, now: Date.now(), runIds: ids });
  if (claimed.length !== runs) throw new Error(`the store-alone bench claimed ${claimed.length} of ${runs} runs`);
  return claimed.map((c) => ({ id: c.run.id, fence: c.run.fence }));
}

async function refusalsOf(commit: Promise<{ ok: boolean }[]>): Promise<void> {
  const refused = (await commit).filter((r) => !r.ok).length;
  if (refused) throw new Error(`${refused} store-alone step commits were refused`);
}

/** µs per step of one run's `steps` steps, one commit each. */
export async function storeAloneSequential(dir: string, steps: number, synchronous: "FULL" | "NORMAL"): Promise<number> {
  const store = stores.openSqliteStore({ path: join(dir, "stead.db"), synchronous });
  try {
    const [run] = await claimedRuns(store, 1);
    if (!run) throw new Error("no run claimed");
    const t0 = performance.now();
    for (let i = 0; i < steps; i++) await refusalsOf(store.commit([[stepCommit(run.id, run.fence, i)]]));
    return ((performance.now() - t0) * 1000) / steps;
  } finally {
    await store.close();
  }
}

/** Steps/s of `runs` runs moving in lockstep: each commit holds one step of every run, as W2's group commit does. */
export async function storeAloneConcurrent(dir: string, runs: number, steps: number): Promise<number> {
  const store = stores.openSqliteStore({ path: join(dir, "stead.db") });
  try {
    const claimed = await claimedRuns(store, runs);
    const t0 = performance.now();
    for (let i = 0; i < steps; i++) await refusalsOf(store.commit(claimed.map((r) => [stepCommit(r.id, r.fence, i)])));
    return (runs * steps * 1000) / (performance.now() - t0);
  } finally {
    await store.close();
  }
}
