import { SteadError, errorMessage } from "../errors.js";
import type { ClaimedRun, ClaimsAndLeases } from "../store/types.js";

/** What a restore hook is told about the run it prepares for: where the run will continue from. */
export interface Checkpoint {
  runId: string;
  definition: string;
  /** The last completed step, or null when the run has none yet. */
  stepId: string | null;
  seq: number | null;
  /** Checkpoint metadata recorded with that step's write (`checkpointMetadata`), or null. */
  metadata: Record<string, string> | null;
  /** The run's workspace directory, when it has one. */
  workspace: string | null;
}

/**
 * Brings an external layer (a database snapshot, a container, a VM) back to where the run will
 * continue, before the run is claimed. Throwing (or running past the timeout) aborts the resume.
 */
export type RestoreHook = (checkpoint: Checkpoint, signal: AbortSignal) => Promise<void> | void;

export const DEFAULT_RESTORE_HOOK_TIMEOUT_MS = 10_000;

export function checkpointOf(c: ClaimedRun): Checkpoint {
  let last: ClaimedRun["journal"][number] | undefined;
  for (const s of c.journal) if (s.status === "completed" && (!last || s.seq > last.seq)) last = s;
  let metadata: Record<string, string> | null = null;
  if (last?.checkpoint) {
    try {
      metadata = JSON.parse(last.checkpoint) as Record<string, string>;
    } catch {
      metadata = null;
    }
  }
  return { runId: c.run.id, definition: c.run.definition, stepId: last?.stepId ?? null, seq: last?.seq ?? null, metadata, workspace: c.run.workspace };
}

/**
 * Runs the hooks one by one, each within `timeoutMs`. All-or-nothing: the first that throws or
 * times out ends the resume with STEAD_RESTORE_FAILED naming it (the caller claims nothing).
 * Returns each hook's duration, for the `run.resumed` event.
 */
export async function runRestoreHooks(hooks: readonly RestoreHook[], checkpoint: Checkpoint, timeoutMs: number): Promise<{ hook: string; ms: number }[]> {
  const report: { hook: string; ms: number }[] = [];
  for (const [i, hook] of hooks.entries()) {
    const name = hook.name || `restoreHooks[${i}]`;
    const ctl = new AbortController();
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        Promise.resolve().then(() => hook(checkpoint, ctl.signal)),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            ctl.abort();
            reject(new Error(`timed out after ${timeoutMs} ms`));
          }, timeoutMs);
        }),
      ]);
    } catch (e) {
      throw new SteadError("STEAD_RESTORE_FAILED", `restore hook ${name} failed for run ${checkpoint.runId}: ${errorMessage(e)}; the run was not claimed and stays resumable`, {
        runId: checkpoint.runId,
        hook: name,
        fix: "fix what the hook restores (or the hook); a worker tries again with backoff",
      });
    } finally {
      clearTimeout(timer);
    }
    report.push({ hook: name, ms: Date.now() - started });
  }
  return report;
}

/** Restore hook durations of a run let through, for its `run.resumed` event. */
export type HookReport = { hook: string; ms: number }[];

/**
 * The restore gate: before a claim, the runs it would take that resume (claimed before) pass
 * through the restore hooks; fresh runs pass as they are. A run whose hook failed stays untouched
 * (no claim, no event) and is backed off.
 */
export class RestoreGate {
  /** Runs whose restore hooks failed: not tried again before this time. */
  private readonly backoff = new Map<string, { until: number; failures: number }>();
  private readonly reports = new Map<string, HookReport>();

  constructor(
    private readonly store: Pick<ClaimsAndLeases, "claimable">,
    private readonly hooks: readonly RestoreHook[],
    private readonly timeoutMs: number,
    private readonly onError: (e: unknown) => void,
  ) {}

  /** The ids a claim of at most `limit` runs may take: fresh runs, and resumed runs whose hooks all passed. */
  async pass(limit: number, definitions: readonly string[], runIds: readonly string[] | undefined): Promise<string[]> {
    const now = Date.now();
    // Runs backing off still come first in claim order: look past them, or they would take every slot.
    const candidates = await this.store.claimable({ definitions, limit: limit + this.backoff.size, now, ...(runIds ? { runIds } : {}) });
    // Backoffs of runs no claim took for a minute past their backoff (ended, taken elsewhere) are forgotten.
    const present = new Set(candidates.map((c) => c.run.id));
    for (const [id, b] of this.backoff) if (!present.has(id) && b.until < now - 60_000) this.backoff.delete(id);
    const ok: string[] = [];
    for (const c of candidates) {
      if (ok.length >= limit) break;
      const id = c.run.id;
      const backoff = this.backoff.get(id);
      if (backoff && backoff.until > now) continue;
      if (c.run.fence === 0) {
        ok.push(id);
        continue;
      }
      try {
        this.reports.set(id, await runRestoreHooks(this.hooks, checkpointOf(c), this.timeoutMs));
        this.backoff.delete(id);
        ok.push(id);
      } catch (e) {
        const failures = (backoff?.failures ?? 0) + 1;
        this.backoff.set(id, { until: Date.now() + Math.min(60_000, 500 * 2 ** (failures - 1)), failures });
        this.onError(e);
      }
    }
    return ok;
  }

  /** The hook durations of a run let through (once). */
  take(runId: string): HookReport | undefined {
    const r = this.reports.get(runId);
    this.reports.delete(runId);
    return r;
  }

  /** After a claim: reports of runs it let through that the claim did not take are dropped. */
  clear(): void {
    this.reports.clear();
  }
}
