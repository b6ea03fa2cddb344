/** Reads snapshot trees from a store: level by level, one `getBlobs` call per level, each tree once. */
import { SteadError } from "../errors.js";
import { isKeyedRoot, keyedRootAddress } from "../store/encryption/keyed-roots.js";
import type { SnapshotsAndBlobs } from "../store/types.js";
import { blobContent, damaged, decodeBlob } from "./blob-codec.js";
import { decodeTree, sha256, type Entry, type ShallowEntry, type Tree } from "./tree.js";

export class TreeLoader {
  private readonly trees = new Map<string, Tree>();
  /** Each keyed root read (an encrypted store's snapshot root), by the plain hash it names. */
  private readonly plainOf = new Map<string, string>();

  constructor(private readonly store: SnapshotsAndBlobs) {}

  /** The whole tree under `root`; a missing tree object is STEAD_SNAPSHOT_DAMAGED naming it. */
  async load(root: string): Promise<Tree> {
    const [tree] = await this.loadMany([root]);
    return tree as Tree;
  }

  /** The trees under `roots` (hashes, or keyed roots: store/encryption/keyed-roots.ts), each with its plain hash. */
  async loadMany(roots: readonly string[]): Promise<Tree[]> {
    // Breadth first: fetch a level's unknown trees in one call, then build bottom up.
    const shallow = new Map<string, Map<string, ShallowEntry>>();
    const pending = new Set<string>();
    const take = (hash: string, entries: Map<string, ShallowEntry>): void => {
      shallow.set(hash, entries);
      for (const e of entries.values()) if (e.kind === "dir" && !this.trees.has(e.hash) && !shallow.has(e.hash)) pending.add(e.hash);
    };
    await this.readKeyedRoots(roots, take);
    for (const r of roots) if (!isKeyedRoot(r) && !this.trees.has(r)) pending.add(r);
    for (;;) {
      const level = [...pending].filter((h) => !shallow.has(h));
      pending.clear();
      if (level.length === 0) break;
      const found = new Map((await this.store.getBlobs(level)).map((b) => [b.hash, b]));
      for (const hash of level) {
        const b = found.get(hash);
        if (!b) throw missingTree(hash);
        take(hash, decodeTree(hash, decodeBlob(hash, b.data).toString("utf8")));
      }
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
    return roots.map((r) => build(this.plainOf.get(r) ?? r));
  }

  /**
   * Reads the tree objects keyed roots name, by their address. The plain root is their content's
   * hash, and the address must be that hash keyed: a tree object put where another belongs fails.
   */
  private async readKeyedRoots(roots: readonly string[], take: (hash: string, entries: Map<string, ShallowEntry>) => void): Promise<void> {
    const keyed = [...new Set(roots.filter((r) => isKeyedRoot(r) && !this.plainOf.has(r)))];
    if (keyed.length === 0) return;
    const found = new Map((await this.store.getBlobs(keyed)).map((b) => [b.hash, b]));
    for (const ref of keyed) {
      const b = found.get(ref);
      if (!b) throw missingTree(ref);
      const content = blobContent(ref, b.data);
      const hash = sha256(content);
      if (this.store.blobAddress?.(hash) !== keyedRootAddress(ref)) throw damaged(ref, "its content does not match its keyed address");
      this.plainOf.set(ref, hash);
      if (!this.trees.has(hash)) take(hash, decodeTree(hash, content.toString("utf8")));
    }
  }
}

function missingTree(hash: string): SteadError {
  return new SteadError("STEAD_SNAPSHOT_DAMAGED", `workspace tree object ${hash.slice(0, 12)} is missing from the store`, {
    fix: "the snapshot is incomplete (its blobs were deleted); restore another snapshot of the run",
  });
}
