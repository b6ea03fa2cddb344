/** `stead.workspaces`: a run's workspace snapshots, read, restored and compared. */
import type { RestoreOptions, Restored, RunSnapshotEntries, RunSnapshotFile, RunSnapshots, SnapshotFiles, SnapshotFilesOptions } from "../../engine/runs/snapshots.js";
import type { TreeDiff } from "../../workspace/index.js";

/** Which snapshot of a run's workspace: a step's (`step`) or by number (`seq`); default its latest step's. */
type SnapshotChoice = { step?: string; seq?: number };

export interface SteadWorkspaces {
  /** A run's workspace path and snapshots, oldest first. */
  snapshots(runId: string): Promise<RunSnapshots>;
  /** Writes a snapshot of a run's workspace (default: its latest step's) into an empty or new directory on this machine. */
  restore(runId: string, options?: RestoreOptions): Promise<Restored>;
  /**
   * A snapshot of a run's workspace (default: its latest step's) as its files and their contents
   * (UTF-8 text, else base64, within a byte budget), written nowhere: a restore for a caller on
   * another machine.
   */
  files(runId: string, options?: SnapshotFilesOptions): Promise<SnapshotFiles>;
  /**
   * A snapshot of a run's workspace (default: its latest step's) entry by entry (directories,
   * files, links; relative paths), each file's content read only when `read` is called: for a
   * caller that streams it (a tarball).
   */
  entries(runId: string, choice?: SnapshotChoice): Promise<RunSnapshotEntries>;
  /** One file of a snapshot of a run's workspace, its bytes whole (STEAD_FILE_NOT_FOUND when the path is no file of it). */
  file(runId: string, path: string, choice?: SnapshotChoice): Promise<RunSnapshotFile>;
  /** Files added, changed and removed between the workspace snapshots of two steps of a run. */
  diff(runId: string, stepA: string, stepB: string): Promise<TreeDiff>;
}

export const WORKSPACES_VERBS = {
  snapshots: "snapshots",
  restore: "restore",
  files: "snapshotFiles",
  entries: "snapshotEntries",
  file: "snapshotFile",
  diff: "diff",
} as const;
