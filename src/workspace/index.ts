/**
 * Workspace durability: snapshots of a run's directory tied to journal positions, kept as
 * content-addressed blobs in the run's store, restorable on any machine that reaches the store.
 *
 * Engine wiring (see each function):
 * - start:   `checkWorkspace(path)` before the run is created; its result goes in `NewRun.workspace`.
 * - claim:   `prepareWorkspace(...)` restores the last completed step's snapshot and returns the tracker.
 * - step:    `tracker.capture({ seq, stepId, source: "step" })` after an effect step; its `snapshot`
 *            and `events` go in the step's commit; `tracker.committed(result)` once it landed.
 * - long step: `watchSettle({ tracker, seq, stepId, commit })`, stopped before the step's capture.
 */
export { WorkspaceTracker, hashesOf, type CaptureAt, type CaptureResult, type TrackerOptions } from "./capture.js";
export type { ChangeWatcher } from "./change-watcher.js";
export { encodeCheckpoint, MAX_CHECKPOINT_BYTES } from "./checkpoint.js";
export { diffTrees, type TreeDiff } from "./diff.js";
export { gcWorkspaces, type GcOptions, type GcResult } from "./gc.js";
export { decodeNotes, noteLabel, type StoredNotes } from "./notes.js";
export { DEFAULT_EXCLUDES, DEFAULT_GC_GRACE_MS, DEFAULT_MAX_FILE_BYTES, type ScanOptions } from "./options.js";
export { checkRestoreTarget, reconcileWorkspace, restoreSnapshot, type ReconcileResult, type RestoreModeOptions, type RestoreResult, type WorkspacePolicy } from "./restore.js";
export { prepareWorkspace, resumeSnapshot, type PrepareAction, type PreparedWorkspace } from "./resume.js";
export type { NoteKind, ScanNote } from "./scan.js";
export { findSnapshot, type SnapshotChoice } from "./select.js";
export { checkReadOptions, readSnapshotFiles, DEFAULT_READ_BYTES, MAX_READ_BYTES, type ReadFiles, type ReadFilesOptions, type SnapshotFile } from "./read-files.js";
export { watchSettle, type SettleOptions, type SettleWatch, type SettleWatchInput } from "./settle.js";
export { TreeLoader } from "./tree-loader.js";
export type { Tree, Entry, FileEntry, DirEntry, LinkEntry } from "./tree.js";
export { checkWorkspace } from "./workspace-path.js";
export { diffSnapshots } from "./snapshot-diff.js";
export { checkFilePath, snapshotEntries, type SnapshotEntries, type SnapshotEntry } from "./snapshot-entries.js";
