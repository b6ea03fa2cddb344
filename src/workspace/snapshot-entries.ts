/**
 * A snapshot's entries one at a time, each file's content read only when asked for: what a
 * stream of the whole snapshot (a tarball) or one file's bytes need, without holding every
 * content at once as `readSnapshotFiles` does.
 *
 * Invariant: every path is relative, "/"-separated, and made of names `isSafeName` allows (no
 * "", ".", ".." or separator): decodeTree refuses any other name, so no path leaves the root.
 */
import { SteadError } from "../errors.js";
import type { SnapshotRow, SnapshotsAndBlobs } from "../store/types.js";
import { decodeBlob } from "./blob-codec.js";
import { isSafeName, type Entry, type Tree } from "./tree.js";
import { TreeLoader } from "./tree-loader.js";

export type SnapshotEntry =
  | { readonly path: string; readonly kind: "dir"; readonly mode: number }
  | { readonly path: string; readonly kind: "file"; readonly mode: number; readonly size: number; readonly hash: string; readonly mtime: number }
  | { readonly path: string; readonly kind: "link"; readonly target: string };

export interface SnapshotEntries {
  /** Directories, files and links, depth first, names in order; a directory before what it holds. */
  readonly entries: readonly SnapshotEntry[];
  /** A file's content, checked against its hash (STEAD_SNAPSHOT_DAMAGED when missing or damaged). */
  read(entry: { readonly path: string; readonly hash: string }): Promise<Buffer>;
}

function* walk(tree: Tree, prefix: string): Generator<SnapshotEntry> {
  for (const name of [...tree.entries.keys()].sort()) {
    const e = tree.entries.get(name) as Entry;
    const path = prefix ? `${prefix}/${name}` : name;
    if (e.kind === "dir") {
      yield { path, kind: "dir", mode: e.mode };
      yield* walk(e.tree, path);
    } else if (e.kind === "file") yield { path, kind: "file", mode: e.mode, size: e.size, hash: e.hash, mtime: e.mtime };
    else yield { path, kind: "link", target: e.target };
  }
}

export async function snapshotEntries(store: SnapshotsAndBlobs, snapshot: Pick<SnapshotRow, "root">): Promise<SnapshotEntries> {
  const tree = await new TreeLoader(store).load(snapshot.root);
  return {
    entries: [...walk(tree, "")],
    async read(entry) {
      const [blob] = await store.getBlobs([entry.hash]);
      if (!blob) {
        throw new SteadError("STEAD_SNAPSHOT_DAMAGED", `the content of ${entry.path} (blob ${entry.hash.slice(0, 12)}) is missing from the store`, {
          fix: "the snapshot is incomplete (its blobs were deleted); read another snapshot of the run",
        });
      }
      return decodeBlob(entry.hash, blob.data);
    },
  };
}

/** A file path a caller names, checked: relative, "/"-separated names, none empty, `.` or `..`. */
export function checkFilePath(p: string): string {
  const parts = p.split("/");
  if (p.length > 4096 || !parts.every(isSafeName)) {
    throw new SteadError("STEAD_BAD_OPTION", `${JSON.stringify(p.slice(0, 100))} is not a file path inside a workspace`, {
      fix: 'name a file relative to the workspace root, "/"-separated (e.g. "src/main.ts")',
      field: "path",
    });
  }
  return p;
}
