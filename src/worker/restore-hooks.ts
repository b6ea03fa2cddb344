import { SteadError, errorMessage } from "../errors.js";
import type { ClaimedRun } from "../store/types.js";

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
