/**
 * Capture: the workspace as a snapshot ready to commit with a step's outcome.
 *
 * Blobs are uploaded before the snapshot row is written (insert if absent, unfenced: a blob is
 * harmless until a snapshot refers to it). Only content the base snapshot does not already refer
 * to is offered to the store, and the store is asked which of it is missing before any is sent.
 *
 * The base is the last snapshot known committed (`committed()`): its blobs are in the store for as
 * long as the run is live (gc only prunes snapshots of finished runs), so a file unchanged since
 * it needs no check at all.
 *
 * With `watch()` on, file-system events tell which paths changed since the base's capture began,
 * and a capture looks only at those (see ChangeWatcher for when it falls back to a full scan: the
 * first capture after `open`, lost or untrusted events). Notes (gaps, skipped files) of
 * directories it did not list are carried over from the base.
 *
 * `capture()` never throws: a failure to look (missing root, store error) is `{ ok: false }` with
 * a `workspace.gap` event; files that vanish or cannot be read are gap notes in an `ok` snapshot.
 */
import { errorMessage } from "../errors.js";
import type { EventWrite, SnapshotRow, SnapshotSource, SnapshotWrite, SnapshotsAndBlobs } from "../store/types.js";
import { encodeBlob } from "./blob-codec.js";
import { ChangeWatcher } from "./change-watcher.js";
import { decodeNotes, encodeNotes } from "./notes.js";
import { resolveScanOptions, type ResolvedScanOptions, type ScanOptions } from "./options.js";
import { scanTree, type ScanNote } from "./scan.js";
import { countFiles, type Tree } from "./tree.js";
import { TreeLoader } from "./tree-loader.js";

export interface CaptureAt {
  /** Journal position: the step's, or -1 for `start`. */
  seq: number;
  stepId: string | null;
  source: SnapshotSource;
}

export type CaptureResult =
  | {
      ok: true;
      /** Put it in the step's `Mutation.snapshots`. */
      snapshot: SnapshotWrite;
      /** Put them in the same mutation's events (a `workspace.gap` when files could not be read). */
      events: EventWrite[];
      tree: Tree;
      notes: ScanNote[];
      /** The change watcher's counter when the capture began (undefined: not watching). */
      mark: number | undefined;
      /** Directories listed: all of them in a full scan, those on changed paths otherwise. */
      dirsListed: number;
    }
  | { ok: false; reason: string; events: EventWrite[] };

/** Capture at most this many bytes of content in memory before asking the store about them. */
const BATCH_BYTES = 8 * 1024 * 1024;
/** A base entry modified this close to (or after) its capture is re-read: its stat may not show a later write. */
const RACY_MS = 1000;

export interface TrackerOptions extends ScanOptions {
  /** Track changes with file-system events (`watch()`), so captures look only at what changed. Default true. */
  watch?: boolean;
  /** The snapshot the workspace was last committed at (its tree is loaded from the store when `tree` is absent). */
  base?: SnapshotRow;
  tree?: Tree;
}

export class WorkspaceTracker {
  private base: { tree: Tree; at: number; hashes: Set<string>; notes: ScanNote[]; mark: number | undefined } | undefined;
  private watcher: ChangeWatcher | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly store: SnapshotsAndBlobs,
    readonly runId: string,
    readonly root: string,
    readonly options: ResolvedScanOptions,
    private readonly watching: boolean,
  ) {}

  static async open(store: SnapshotsAndBlobs, runId: string, root: string, options: TrackerOptions = {}): Promise<WorkspaceTracker> {
    const t = new WorkspaceTracker(store, runId, root, resolveScanOptions(options), options.watch ?? true);
    if (options.base) {
      const tree = options.tree ?? (await new TreeLoader(store).load(options.base.root));
      t.setBase(tree, options.base.createdAt, decodeNotes(options.base.notes).notes, undefined);
    }
    return t;
  }

  /**
   * Starts tracking changes by file-system events (idempotent; a no-op with `watch: false`). The
   * first capture after it still scans in full; later ones look only at what changed. Returns the
   * watcher, which the settle watch listens to.
   */
  watch(): ChangeWatcher | undefined {
    if (!this.watching) return undefined;
    if (!this.watcher) {
      this.watcher = new ChangeWatcher(this.root, this.options);
      this.watcher.start();
    }
    return this.watcher;
  }

  /** Stops watching. Captures go on working (in full). */
  close(): void {
    this.watcher?.close();
    this.watcher = undefined;
    if (this.base) this.base.mark = undefined;
  }

  /** The tree of the base snapshot, if any. */
  get baseTree(): Tree | undefined {
    return this.base?.tree;
  }

  /** Records that `result`'s snapshot committed: later captures compare against it. */
  committed(result: CaptureResult): void {
    if (!result.ok) return;
    // A mark counts events of the watcher that was running when it was taken, and only that one.
    const mark = this.watcher !== undefined && marks.get(result) === this.watcher ? result.mark : undefined;
    this.setBase(result.tree, result.snapshot.createdAt, result.notes, mark);
    if (mark !== undefined) this.watcher?.forget(mark);
  }

  private setBase(tree: Tree, at: number, notes: ScanNote[], mark: number | undefined): void {
    const hashes = this.base?.tree === tree ? this.base.hashes : hashesOf(tree);
    this.base = { tree, at, hashes, notes, mark };
  }

  /** Captures run one at a time (a settle capture and a step's own may be asked for together). */
  capture(at: CaptureAt, extra: { checkpoint?: string | null } = {}): Promise<CaptureResult> {
    const run = this.queue.then(() => this.captureNow(at, extra));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async captureNow(at: CaptureAt, extra: { checkpoint?: string | null }): Promise<CaptureResult> {
    const base = this.base;
    let mark: number | undefined;
    let dirty: Set<string> | undefined;
    const watcher = this.watcher;
    if (watcher) {
      // Undrained (the barrier could not tell): this capture scans in full; the mark still holds.
      const drained = await watcher.drain();
      mark = watcher.counter;
      if (drained && base?.mark !== undefined) dirty = watcher.since(base.mark);
    }
    const createdAt = Date.now();
    const known = base?.hashes ?? new Set<string>();
    const pending = new Map<string, Buffer>();
    let pendingBytes = 0;
    let newBytes = 0;
    const flush = async () => {
      if (pending.size === 0) return;
      const missing = await this.store.missingBlobs([...pending.keys()]);
      const blobs = missing.map((hash) => {
        const content = pending.get(hash) as Buffer;
        return { hash, size: content.byteLength, data: encodeBlob(content) };
      });
      await this.store.putBlobs(blobs);
      for (const b of blobs) newBytes += b.data.byteLength;
      for (const h of pending.keys()) known.add(h);
      pending.clear();
      pendingBytes = 0;
    };
    try {
      const scan = await scanTree({
        root: this.root,
        base: base?.tree,
        trustBefore: base ? base.at - RACY_MS : 0,
        options: this.options,
        ...(dirty ? { dirty } : {}),
        onContent: async (hash, content) => {
          if (known.has(hash) || pending.has(hash)) return;
          pending.set(hash, content);
          pendingBytes += content.byteLength;
          if (pendingBytes >= BATCH_BYTES) await flush();
        },
      });
      await flush();
      for (const [hash, text] of scan.newTrees) if (!known.has(hash)) pending.set(hash, Buffer.from(text, "utf8"));
      await flush();
      // Notes of directories this scan did not list still hold: carry them over from the base.
      const carried = dirty && base ? base.notes.filter((n) => !scan.listed.has(parentOf(n.path))) : [];
      const notes = [...carried, ...scan.notes].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
      const { files, bytes } = countFiles(scan.tree);
      const snapshot: SnapshotWrite = {
        seq: at.seq,
        stepId: at.stepId,
        source: at.source,
        root: scan.tree.hash,
        files,
        bytes,
        filesChanged: base ? scan.changed : files,
        newBytes,
        notes: encodeNotes(notes),
        checkpoint: extra.checkpoint ?? null,
        createdAt,
      };
      const gaps = notes.filter((n) => n.kind === "gap");
      const events: EventWrite[] = gaps.length
        ? [{ type: "workspace.gap", data: { ...where(at), paths: gaps.slice(0, 20).map((g) => `${g.path}: ${g.detail}`), count: gaps.length } }]
        : [];
      const result: CaptureResult = { ok: true, snapshot, events, tree: scan.tree, notes, mark, dirsListed: scan.listed.size };
      if (watcher) marks.set(result, watcher);
      return result;
    } catch (e) {
      const reason = errorMessage(e);
      return { ok: false, reason, events: [{ type: "workspace.gap", data: { ...where(at), reason, workspace: this.root } }] };
    }
  }
}

const marks = new WeakMap<CaptureResult, ChangeWatcher>();

const parentOf = (path: string): string => {
  const i = path.lastIndexOf("/");
  return i < 0 ? "" : path.slice(0, i);
};

const where = (at: CaptureAt) => ({ seq: at.seq, step: at.stepId, source: at.source });

/** Every hash a tree refers to: its trees and its files' contents. */
export function hashesOf(tree: Tree, into = new Set<string>()): Set<string> {
  if (into.has(tree.hash)) return into;
  into.add(tree.hash);
  for (const e of tree.entries.values()) {
    if (e.kind === "file") into.add(e.hash);
    else if (e.kind === "dir") hashesOf(e.tree, into);
  }
  return into;
}
