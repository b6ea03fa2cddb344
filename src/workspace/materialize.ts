/** Writes files of a tree to disk from their blobs: fetched in batches, each content once. */
import { chmodSync, mkdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { SteadError } from "../errors.js";
import type { SnapshotsAndBlobs } from "../store/types.js";
import { decodeBlob } from "./blob-codec.js";
import type { FileEntry, LinkEntry, Tree } from "./tree.js";

const BATCH_BYTES = 16 * 1024 * 1024;

/** Writes `items` (paths relative to `root`) from the store; parent directories are created. */
export async function writeEntries(store: SnapshotsAndBlobs, root: string, items: readonly [string, FileEntry | LinkEntry][]): Promise<void> {
  const files = items.filter((i): i is [string, FileEntry] => i[1].kind === "file");
  const byHash = new Map<string, string[]>();
  for (const [path, e] of files) byHash.set(e.hash, [...(byHash.get(e.hash) ?? []), path]);
  const entryOf = new Map(files);
  const hashes = [...byHash.keys()];
  for (let i = 0; i < hashes.length; ) {
    const batch: string[] = [];
    let bytes = 0;
    while (i < hashes.length && (batch.length === 0 || bytes < BATCH_BYTES)) {
      const h = hashes[i++] as string;
      batch.push(h);
      bytes += entryOf.get((byHash.get(h) as string[])[0] as string)?.size ?? 0;
    }
    const found = new Map((await store.getBlobs(batch)).map((b) => [b.hash, b]));
    for (const h of batch) {
      const blob = found.get(h);
      if (!blob) {
        throw new SteadError("STEAD_SNAPSHOT_DAMAGED", `the content of ${(byHash.get(h) as string[])[0]} (blob ${h.slice(0, 12)}) is missing from the store`, {
          fix: "the snapshot is incomplete (its blobs were deleted); restore another snapshot of the run",
        });
      }
      const content = decodeBlob(h, blob.data);
      for (const path of byHash.get(h) as string[]) writeFile(join(root, path), content, entryOf.get(path) as FileEntry);
    }
  }
  for (const [path, e] of items) {
    if (e.kind !== "link") continue;
    const full = join(root, path);
    mkdirSync(dirname(full), { recursive: true });
    rmSync(full, { force: true });
    symlinkSync(e.target, full);
  }
}

function writeFile(full: string, content: Buffer, e: FileEntry): void {
  mkdirSync(dirname(full), { recursive: true });
  // A read-only file left by an earlier restore is replaced, not written through.
  rmSync(full, { force: true });
  writeFileSync(full, content, { mode: 0o600 });
  chmodSync(full, e.mode);
  // The recorded mtime: the next capture against this snapshot then trusts the file's stat.
  utimesSync(full, new Date(e.mtime), new Date(e.mtime));
}

/** Every directory of a tree (relative paths, parents first) with its mode. */
export function dirsOf(tree: Tree, prefix = "", out: [string, number][] = []): [string, number][] {
  for (const [name, e] of tree.entries) {
    if (e.kind !== "dir") continue;
    const path = prefix ? `${prefix}/${name}` : name;
    out.push([path, e.mode]);
    dirsOf(e.tree, path, out);
  }
  return out;
}

/** Creates the tree's directories (writable while files go in); `applyDirModes` sets their modes after. */
export function makeDirs(root: string, tree: Tree): void {
  for (const [path] of dirsOf(tree)) mkdirSync(join(root, path), { recursive: true, mode: 0o700 });
}

export function applyDirModes(root: string, tree: Tree): void {
  for (const [path, mode] of dirsOf(tree).reverse()) chmodSync(join(root, path), mode);
}
