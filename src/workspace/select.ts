/** Finding a run's snapshot by step id or journal position, with errors that say what exists. */
import { SteadError } from "../errors.js";
import type { SnapshotRow, SnapshotsAndBlobs } from "../store/types.js";

export interface SnapshotChoice {
  step?: string;
  seq?: number;
}

/**
 * By step id: that step's `step` snapshot. By seq: the `start`/`step` snapshot there, else the
 * latest `settle` one. Neither: the latest `start`/`step` snapshot of the run.
 */
export async function findSnapshot(store: SnapshotsAndBlobs, runId: string, choice: SnapshotChoice = {}): Promise<SnapshotRow> {
  const all = await store.snapshots(runId);
  let found: SnapshotRow | undefined;
  if (choice.step !== undefined) found = choice.step === "start" ? all.find((s) => s.source === "start") : all.filter((s) => s.source === "step" && s.stepId === choice.step).at(-1);
  else if (choice.seq !== undefined) found = all.find((s) => s.seq === choice.seq && s.source !== "settle") ?? all.filter((s) => s.seq === choice.seq).at(-1);
  else found = all.filter((s) => s.source !== "settle").at(-1) ?? all.at(-1);
  if (found) return found;
  const what = choice.step !== undefined ? `step "${choice.step}"` : choice.seq !== undefined ? `journal position ${choice.seq}` : "any step";
  const have = all.filter((s) => s.source !== "settle").map((s) => s.stepId ?? "start");
  throw new SteadError("STEAD_SNAPSHOT_NOT_FOUND", `run ${runId} has no workspace snapshot of ${what}`, {
    runId,
    ...(choice.step !== undefined ? { stepId: choice.step } : {}),
    fix: have.length ? `pick one of its snapshots (\`stead snapshots ${runId}\`): ${have.slice(-10).join(", ")}` : `run ${runId} has no snapshots: it was started without a workspace, or before its first step`,
  });
}
