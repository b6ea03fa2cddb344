/**
 * Before a resumed run continues, its workspace is brought to the snapshot of its last completed
 * step: restored whole into a missing or empty directory (another machine), or compared in place
 * and, under policy `restore`, put back (files changed, added or removed since that step).
 */
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import type { EventWrite, SnapshotRow, StepRow, SnapshotsAndBlobs } from "../store/types.js";
import { WorkspaceTracker } from "./capture.js";
import type { ScanOptions } from "./options.js";
import { reconcileWorkspace, restoreSnapshot, treeToWrite, type RestoreModeOptions, type WorkspacePolicy } from "./restore.js";
import { statRoot } from "./workspace-path.js";
import { TreeLoader } from "./tree-loader.js";

/**
 * The snapshot a resume restores: the latest `start` or `step` snapshot at or before the last
 * completed step of `journal`, whose step the journal still has completed at that position (a
 * snapshot left at a position the journal no longer agrees with is passed over).
 */
export function resumeSnapshot(snapshots: readonly SnapshotRow[], journal: readonly StepRow[]): SnapshotRow | undefined {
  const completed = new Map(journal.filter((s) => s.status === "completed").map((s) => [s.seq, s.stepId]));
  let best: SnapshotRow | undefined;
  for (const s of snapshots) {
    if (s.source === "settle") continue;
    if (s.source === "step" && completed.get(s.seq) !== s.stepId) continue;
    if (!best || s.seq > best.seq) best = s;
  }
  return best;
}

export type PrepareAction = "none" | "restored" | "put-back" | "kept" | "unchanged";

export interface PreparedWorkspace {
  /** Captures from here on compare against the snapshot restored. */
  tracker: WorkspaceTracker;
  snapshot: SnapshotRow | undefined;
  /**
   * none: the run has no snapshot (a missing directory is created empty); restored: written into a
   * missing or empty directory; put-back: differences undone in place (policy restore); kept:
   * differences left (policy keep); unchanged: the directory matched.
   */
  action: PrepareAction;
  changed: string[];
  added: string[];
  removed: string[];
  /** A `workspace.restored` event for the claim's (or first step's) commit. */
  events: EventWrite[];
}

const LIST = 50;

export async function prepareWorkspace(input: {
  store: SnapshotsAndBlobs;
  runId: string;
  root: string;
  journal: readonly StepRow[];
  policy?: WorkspacePolicy;
  options?: ScanOptions;
  modes?: RestoreModeOptions;
}): Promise<PreparedWorkspace> {
  const { store, runId, root } = input;
  const snapshot = resumeSnapshot(await store.snapshots(runId), input.journal);
  const empty = !existsSync(root) || (statRoot(root).isDirectory() && readdirSync(root).length === 0);
  if (!snapshot) {
    mkdirSync(root, { recursive: true });
    statRoot(root);
    const tracker = await WorkspaceTracker.open(store, runId, root, input.options ?? {});
    return { tracker, snapshot, action: "none", changed: [], added: [], removed: [], events: [] };
  }
  // The tree as written: later captures compare the files against it.
  const tree = treeToWrite(await new TreeLoader(store).load(snapshot.root), input.modes);
  let action: PrepareAction;
  let lists = { changed: [] as string[], added: [] as string[], removed: [] as string[] };
  if (empty) {
    await restoreSnapshot(store, snapshot, root, tree, input.modes);
    action = "restored";
  } else {
    const policy = input.policy ?? "restore";
    const r = await reconcileWorkspace(store, snapshot, root, policy, input.options ?? {}, tree, input.modes);
    lists = { changed: r.changed, added: r.added, removed: r.removed };
    action = r.applied ? "put-back" : lists.changed.length + lists.added.length + lists.removed.length ? "kept" : "unchanged";
  }
  const tracker = await WorkspaceTracker.open(store, runId, root, { ...(input.options ?? {}), base: snapshot, tree });
  const events: EventWrite[] = [
    {
      type: "workspace.restored",
      data: {
        seq: snapshot.seq,
        step: snapshot.stepId,
        action,
        workspace: root,
        changed: lists.changed.slice(0, LIST),
        added: lists.added.slice(0, LIST),
        removed: lists.removed.slice(0, LIST),
        counts: { changed: lists.changed.length, added: lists.added.length, removed: lists.removed.length },
      },
    },
  ];
  return { tracker, snapshot, action, ...lists, events };
}
