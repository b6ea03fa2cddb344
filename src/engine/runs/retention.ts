/**
 * Deleting finished runs once they are old enough (`stead gc --finished-before`, a worker's
 * `retention`): the store's finished roots, a page at a time, each tree deleted whole by the store
 * (which re-checks, inside its transaction, that every run of it is finished and old enough), then
 * the workspace blobs no snapshot refers to any more.
 */
import { SteadError } from "../../errors.js";
import type { RetentionResult, RunRetention, SnapshotsAndBlobs } from "../../store/types.js";
import type { GcResult } from "../../workspace/index.js";
import { gcWorkspaces } from "../../workspace/lazy.js";
import { parseDuration } from "../durations.js";
import { DEFAULT_IDEMPOTENCY_TTL_MS } from "../control/idempotency.js";
import { referencedSteps } from "./output-refs.js";

export interface RunRetentionOptions {
  /** Delete runs finished at least this long ago: ms, or a duration such as "30d". */
  finishedBefore: number | string;
  /** Keep each run's row and one `run.pruned` event (status, input, output and error stay readable). Default false. */
  keepSummary?: boolean;
  /** Unreferenced blobs written this recently are spared (captures in flight). */
  graceMs?: number;
}

export interface RunRetentionSummary {
  /** Runs deleted (or reduced to a summary). */
  runs: number;
  /** Trees left alone, each with why (at most 100 listed). */
  kept: RetentionResult["kept"];
  keptCount: number;
  blobsDeleted: number;
  bytesFreed: number;
}

/** Roots per store transaction: SQLite's is synchronous, and a worker's leases wait meanwhile. */
const PAGE = 50;
const MAX_KEPT_LISTED = 100;

/**
 * The shortest age retention takes: an idempotency key lives a day by default, and a key whose
 * run was deleted would answer a retried command with a run that no longer exists.
 */
export const MIN_RETENTION_MS = DEFAULT_IDEMPOTENCY_TTL_MS;

export function retentionAge(value: number | string, what = "finishedBefore"): number {
  const ms = parseDuration(value, what);
  if (ms < MIN_RETENTION_MS) {
    throw new SteadError("STEAD_BAD_OPTION", `${what} ${String(value)} is shorter than a day, the life of an idempotency key`, { fix: "keep finished runs at least a day, e.g. 30d" });
  }
  return ms;
}

export async function deleteFinishedRuns(store: RunRetention & SnapshotsAndBlobs, options: RunRetentionOptions): Promise<RunRetentionSummary> {
  const age = retentionAge(options.finishedBefore);
  const now = await store.storeTime();
  const endedBefore = now - age;
  const out: RunRetentionSummary = { runs: 0, kept: [], keptCount: 0, blobsDeleted: 0, bytesFreed: 0 };
  let after: string | null = null;
  for (;;) {
    const roots = await store.finishedRoots(endedBefore, after, PAGE);
    if (roots.length === 0) break;
    const r = await store.deleteRunTrees(roots, { endedBefore, keepSummary: options.keepSummary ?? false, at: now, summaryKeeps: referencedSteps });
    out.runs += r.runs.length;
    out.keptCount += r.kept.length;
    for (const k of r.kept) if (out.kept.length < MAX_KEPT_LISTED) out.kept.push(k);
    after = roots[roots.length - 1] ?? null;
    if (roots.length < PAGE) break;
  }
  const gc: GcResult = await gcWorkspaces(store, options.graceMs === undefined ? {} : { graceMs: options.graceMs });
  out.blobsDeleted = gc.blobsDeleted;
  out.bytesFreed = gc.bytesFreed;
  return out;
}
