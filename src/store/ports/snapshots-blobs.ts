/**
 * Workspace snapshots and their content-addressed blobs (src/workspace/ gives them meaning; the
 * store only keeps them). A snapshot is written only with a commit (a mutation's `snapshots`).
 */
import type { BlobInfo, BlobRow, BlobWrite, SnapshotAt, SnapshotRow } from "../records.js";

export interface SnapshotsAndBlobs {
  /**
   * Inserts blobs whose hash is absent (not fenced: one hash is one content, so a second writer
   * changes nothing). A present blob is only marked as touched now (see {@link missingBlobs}).
   */
  putBlobs(blobs: readonly BlobWrite[]): Promise<void>;
  /**
   * The hashes of `hashes` the store does not hold. Every present one is marked touched now (at
   * most once per `BLOB_TOUCH_INTERVAL_MS`): gc spares blobs touched within its grace period,
   * so a capture that relies on a present, unreferenced blob keeps it alive until its snapshot commits.
   */
  missingBlobs(hashes: readonly string[]): Promise<string[]>;
  /** The blobs of `hashes` the store holds (absent ones are left out), in no particular order. */
  getBlobs(hashes: readonly string[]): Promise<BlobRow[]>;
  /** A run's snapshots, by seq then id. */
  snapshots(runId: string): Promise<SnapshotRow[]>;
  /** A run's `start`/`step` snapshot at a journal position, or the `step` snapshot of a step id. */
  getSnapshot(runId: string, at: SnapshotAt): Promise<SnapshotRow | undefined>;
  /** The distinct root hashes of every snapshot in the store (gc marks from them). */
  snapshotRoots(): Promise<string[]>;
  /**
   * Deletes the snapshots of terminal runs that are older than each run's last `keepSteps` `step`
   * snapshots (a run with fewer keeps all; 0 deletes them all). Returns how many were deleted.
   */
  pruneSnapshots(keepSteps: number): Promise<number>;
  /** The store's clock in ms (the clock blob touches are marked with). */
  storeTime(): Promise<number>;
  /** Up to `limit` blobs last touched before `touchedBefore` (store clock), with hash above `after`, by hash. */
  listBlobs(after: string | null, limit: number, touchedBefore: number): Promise<BlobInfo[]>;
  /**
   * The name a blob of content hash `hash` is kept under, when it is not the hash itself (an
   * encrypted store keys its addresses): what `listBlobs` lists and `deleteBlobs` takes. Every
   * other method takes content hashes.
   */
  readonly blobAddress?: (hash: string) => string;
  /** Deletes those of `hashes` still last touched before `touchedBefore`; returns the count and their stored bytes. */
  deleteBlobs(hashes: readonly string[], touchedBefore: number): Promise<{ count: number; bytes: number }>;
}
