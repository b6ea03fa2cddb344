/**
 * A run's workspace as the control API reads it: its snapshots, one restored into a directory,
 * the files that differ between two steps. Each call first checks the run exists.
 */
import { resolve } from "node:path";
import { SteadError } from "../../errors.js";
import type { Commits, RunReads, SnapshotRow, SnapshotsAndBlobs } from "../../store/types.js";
import type { SnapshotEntries, SnapshotEntry, ReadFilesOptions, SnapshotFile, StoredNotes, TreeDiff } from "../../workspace/index.js";
import { workspace, type Workspace } from "../../workspace/lazy.js";
import { requireRun } from "../control/common.js";

/** A snapshot with its notes and checkpoint metadata parsed. */
export type SnapshotView = Omit<SnapshotRow, "notes" | "checkpoint"> & { notes: StoredNotes; checkpoint: unknown };

export interface RunSnapshots {
  runId: string;
  /** The directory the run works in, as given when it started; null without one. */
  workspace: string | null;
  /** Oldest first. */
  snapshots: SnapshotView[];
}

export interface RestoreOptions {
  /** The snapshot of this step (`start`: as the run found its workspace). */
  step?: string;
  /** The snapshot at this journal position (-1: the start snapshot). */
  seq?: number;
  /** The directory to write, missing or empty. Default: the run's own workspace path. */
  to?: string;
  /** Write setuid and setgid bits as the snapshot records them. Default false: cleared. */
  keepSpecialBits?: boolean;
}

export interface Restored {
  runId: string;
  snapshot: SnapshotView;
  /** The directory written (absolute). */
  target: string;
  files: number;
}

function snapshotView(w: Workspace, s: SnapshotRow): SnapshotView {
  return { ...s, notes: w.decodeNotes(s.notes), checkpoint: s.checkpoint === null ? null : (JSON.parse(s.checkpoint) as unknown) };
}

export async function runSnapshots(store: Commits & RunReads & SnapshotsAndBlobs, runId: string): Promise<RunSnapshots> {
  const w = await workspace();
  const run = await requireRun(store, runId);
  return { runId, workspace: run.workspace, snapshots: (await store.snapshots(runId)).map((s) => snapshotView(w, s)) };
}

/** Writes a snapshot of the run's workspace (default: its latest step's) into an empty or new directory. */
export async function restoreRunSnapshot(store: Commits & RunReads & SnapshotsAndBlobs, runId: string, options: RestoreOptions = {}): Promise<Restored> {
  const w = await workspace();
  const run = await requireRun(store, runId);
  const snapshot = await w.findSnapshot(store, runId, { ...(options.step !== undefined ? { step: options.step } : {}), ...(options.seq !== undefined ? { seq: options.seq } : {}) });
  const target = options.to ?? run.workspace;
  if (target === null) {
    throw new SteadError("STEAD_BAD_OPTION", `run ${runId} has no workspace path to restore into`, { runId, fix: "pass --to <dir>, a new or empty directory" });
  }
  w.checkRestoreTarget(resolve(target));
  const r = await w.restoreSnapshot(store, snapshot, target, undefined, { keepSpecialBits: options.keepSpecialBits ?? false });
  return { runId, snapshot: snapshotView(w, snapshot), target: r.target, files: r.files };
}

export interface SnapshotFilesOptions extends ReadFilesOptions {
  /** The snapshot of this step (`start`: as the run found its workspace). */
  step?: string;
  /** The snapshot at this journal position (-1: the start snapshot). */
  seq?: number;
}

export interface SnapshotFiles {
  runId: string;
  snapshot: SnapshotView;
  /** Files and links, in path order. */
  files: SnapshotFile[];
  /** Files listed without their content because it would pass the byte budget. */
  omitted: number;
}

/** A snapshot of the run's workspace (default: its latest step's) as files and contents, written nowhere. */
export async function readRunSnapshot(store: Commits & RunReads & SnapshotsAndBlobs, runId: string, options: SnapshotFilesOptions = {}): Promise<SnapshotFiles> {
  const w = await workspace();
  w.checkReadOptions(options);
  await requireRun(store, runId);
  const snapshot = await w.findSnapshot(store, runId, { ...(options.step !== undefined ? { step: options.step } : {}), ...(options.seq !== undefined ? { seq: options.seq } : {}) });
  const r = await w.readSnapshotFiles(store, snapshot, options);
  return { runId, snapshot: snapshotView(w, snapshot), files: r.files, omitted: r.omitted };
}

/** Files added, changed and removed between the step snapshots of `stepA` and `stepB` (`start`: as the run found its workspace). */
export async function diffRunSnapshots(store: Commits & RunReads & SnapshotsAndBlobs, runId: string, stepA: string, stepB: string): Promise<TreeDiff> {
  const w = await workspace();
  await requireRun(store, runId);
  const a = await w.findSnapshot(store, runId, { step: stepA });
  const b = await w.findSnapshot(store, runId, { step: stepB });
  return w.diffSnapshots(store, a, b);
}

export type RunSnapshotEntries = SnapshotEntries & { runId: string; snapshot: SnapshotView };

/** A snapshot of the run's workspace (default: its latest step's) entry by entry, each file's content read when asked for. */
export async function runSnapshotEntries(store: Commits & RunReads & SnapshotsAndBlobs, runId: string, choice: { step?: string; seq?: number } = {}): Promise<RunSnapshotEntries> {
  const w = await workspace();
  await requireRun(store, runId);
  const snapshot = await w.findSnapshot(store, runId, choice);
  return { runId, snapshot: snapshotView(w, snapshot), ...(await w.snapshotEntries(store, snapshot)) };
}

export interface RunSnapshotFile {
  runId: string;
  snapshot: SnapshotView;
  file: Extract<SnapshotEntry, { kind: "file" }>;
  content: Buffer;
}

/** One file of a snapshot, its bytes whole. A path that is no file of it (missing, a directory, a link) is STEAD_FILE_NOT_FOUND. */
export async function runSnapshotFile(store: Commits & RunReads & SnapshotsAndBlobs, runId: string, path: string, choice: { step?: string; seq?: number } = {}): Promise<RunSnapshotFile> {
  (await workspace()).checkFilePath(path);
  const all = await runSnapshotEntries(store, runId, choice);
  const e = all.entries.find((x) => x.path === path);
  if (e?.kind !== "file") {
    const what = e === undefined ? "no file" : e.kind === "dir" ? "a directory, not a file," : "a link, not a file,";
    throw new SteadError("STEAD_FILE_NOT_FOUND", `the snapshot of run ${runId} at ${all.snapshot.stepId ?? "start"} has ${what} at ${JSON.stringify(path.slice(0, 200))}`, {
      runId,
      fix: "name one of the snapshot's files (its tree lists them)",
      field: "path",
    });
  }
  return { runId, snapshot: all.snapshot, file: e, content: await all.read(e) };
}
