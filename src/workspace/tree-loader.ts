/** Reads snapshot trees from a store: level by level, one `getBlobs` call per level, each tree once. */
import { SteadError } from "../errors.js";
import type { SnapshotsAndBlobs } from "../store/types.js";
import { decodeBlob } from "./blob-codec.js";
import { decodeTree, type Entry, type ShallowEntry, type Tree } from "./tree.js";

export class TreeLoader {
  private readonly trees = new Map<string, Tree>();

  constructor(private readonly store: SnapshotsAndBlobs) {}

  /** The whole tree under `root`; a missing tree object is STEAD_SNAPSHOT_DAMAGED naming it. */
  async load(root: string): Promise<Tree> {
    await this.loadMany([root]);
    return this.trees.get(root) as Tree;
  }

  async loadMany(roots: readonly string[]): Promise<Tree[]> {
    // Breadth first: fetch a level's unknown trees in one call, then build bottom up.
    const shallow = new Map<string, Map<string, ShallowEntry>>();
    let level = [...new Set(roots)].filter((h) => !this.trees.has(h));
    while (level.length > 0) {
      const blobs = await this.store.getBlobs(level);
      const found = new Map(blobs.map((b) => [b.hash, b]));
      const next = new Set<string>();
      for (const hash of level) {
        const b = found.get(hash);
        if (!b) throw missingTree(hash);
        const entries = decodeTree(hash, decodeBlob(hash, b.data).toString("utf8"));
        shallow.set(hash, entries);
        for (const e of entries.values()) if (e.kind === "dir" && !this.trees.has(e.hash) && !shallow.has(e.hash)) next.add(e.hash);
      }
      level = [...next];
    }
    const build = (hash: string): Tree => {
      const known = this.trees.get(hash);
      if (known) return known;
      const entries = new Map<string, Entry>();
      for (const [name, e] of shallow.get(hash) ?? []) {
        entries.set(name, e.kind === "dir" ? { kind: "dir", mode: e.mode, tree: build(e.hash) } : e);
      }
      const tree: Tree = { hash, entries };
      this.trees.set(hash, tree);
      return tree;
    };
    return roots.map(build);
  }
}

function missingTree(hash: string): SteadError {
  return new SteadError("STEAD_SNAPSHOT_DAMAGED", `workspace tree object ${hash.slice(0, 12)} is missing from the store`, {
    fix: "the snapshot is incomplete (its blobs were deleted); restore another snapshot of the run",
  });
}
