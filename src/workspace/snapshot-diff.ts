import type { SnapshotRow, SnapshotsAndBlobs } from "../store/types.js";
import { diffTrees, type TreeDiff } from "./diff.js";
import { TreeLoader } from "./tree-loader.js";

/** Files added, changed and removed from snapshot `a` to snapshot `b`. */
export async function diffSnapshots(store: SnapshotsAndBlobs, a: Pick<SnapshotRow, "root">, b: Pick<SnapshotRow, "root">): Promise<TreeDiff> {
  const [ta, tb] = await new TreeLoader(store).loadMany([a.root, b.root]);
  return diffTrees(ta as NonNullable<typeof ta>, tb as NonNullable<typeof tb>);
}
