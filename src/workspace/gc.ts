/**
 * Workspace garbage collection, safe while workers write:
 * 1. `cutoff` = the store's clock minus `graceMs`, read first;
 * 2. optionally, snapshots of finished runs older than their last `keepSteps` step snapshots go;
 * 3. every blob reachable from a remaining snapshot is marked;
 * 4. blobs neither marked nor touched since `cutoff` are deleted (the delete re-checks the touch).
 * A capture touches (putBlobs / missingBlobs) every blob it relies on that its committed base does
 * not refer to, so a capture whose snapshot commits within `graceMs` of those calls (minus
 * BLOB_TOUCH_INTERVAL_MS) never refers to a deleted blob: either it committed before step 3 read
 * the roots, and its blobs are marked, or its touches are later than `cutoff`.
 */
import type { SnapshotsAndBlobs } from "../store/types.js";
import { hashesOf } from "./capture.js";
import { TreeLoader } from "./tree-loader.js";
import { DEFAULT_GC_GRACE_MS } from "./options.js";

export interface GcOptions {
  /** Prune snapshots of finished runs older than their last N step snapshots. Absent: keep every snapshot. */
  keepSteps?: number;
  /** Unreferenced blobs younger than this survive (see above). Default one hour. */
  graceMs?: number;
}

export interface GcResult {
  snapshotsDeleted: number;
  blobsDeleted: number;
  bytesFreed: number;
  /** Blobs still referenced by a snapshot. */
  blobsReferenced: number;
  /** Snapshot roots whose trees could not be read (damaged snapshots). */
  brokenSnapshots: number;
}

export async function gcWorkspaces(store: SnapshotsAndBlobs, options: GcOptions = {}): Promise<GcResult> {
  const cutoff = (await store.storeTime()) - (options.graceMs ?? DEFAULT_GC_GRACE_MS);
  const snapshotsDeleted = options.keepSteps === undefined ? 0 : await store.pruneSnapshots(options.keepSteps);
  const loader = new TreeLoader(store);
  const marked = new Set<string>();
  const roots = await store.snapshotRoots();
  let brokenSnapshots = 0;
  for (let i = 0; i < roots.length; i += 100) {
    const batch = roots.slice(i, i + 100);
    try {
      for (const tree of await loader.loadMany(batch)) hashesOf(tree, marked);
    } catch {
      // Some root in the batch lacks a tree object (a damaged snapshot, which no restore can use):
      // mark the others one by one; what only the damaged one reached is not kept for it.
      for (const root of batch) {
        try {
          hashesOf(await loader.load(root), marked);
        } catch {
          brokenSnapshots++;
        }
      }
    }
  }
  const address = store.blobAddress;
  const kept = address ? new Set([...marked].map(address)) : marked;
  let blobsDeleted = 0;
  let bytesFreed = 0;
  for (let after: string | null = null; ; ) {
    const page = await store.listBlobs(after, 1000, cutoff);
    const last = page.at(-1);
    if (!last) break;
    const dead = page.filter((b) => !kept.has(b.hash)).map((b) => b.hash);
    if (dead.length) {
      const r = await store.deleteBlobs(dead, cutoff);
      blobsDeleted += r.count;
      bytesFreed += r.bytes;
    }
    if (page.length < 1000) break;
    after = last.hash;
  }
  return { snapshotsDeleted, blobsDeleted, bytesFreed, blobsReferenced: marked.size, brokenSnapshots };
}
