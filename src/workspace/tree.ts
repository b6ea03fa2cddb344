/**
 * The manifest of a snapshot, as content-addressed tree objects (one per directory, like git's):
 * an unchanged directory keeps its hash, so a snapshot where one file changed stores one new tree
 * per directory on that file's path and nothing else.
 *
 * A tree object is the JSON text of its entries sorted by name:
 *   ["name", "f", mode, size, mtimeMs, contentHash]   a regular file
 *   ["name", "d", mode, treeHash]                      a directory
 *   ["name", "l", target]                              a symbolic link (recorded, never followed)
 * and its hash is the SHA-256 of that text, like a file's is of its bytes.
 */
import { createHash } from "node:crypto";
import { SteadError } from "../errors.js";

export interface FileEntry {
  kind: "file";
  mode: number;
  size: number;
  /** Modification time in ms, rounded (stat reports whole-ms times set by a restore as x.999…), compared by change detection. */
  mtime: number;
  hash: string;
}

export interface DirEntry {
  kind: "dir";
  mode: number;
  tree: Tree;
}

export interface LinkEntry {
  kind: "link";
  target: string;
}

export type Entry = FileEntry | DirEntry | LinkEntry;

export interface Tree {
  hash: string;
  entries: ReadonlyMap<string, Entry>;
}

export const sha256 = (data: string | Uint8Array): string => createHash("sha256").update(data).digest("hex");

type Row = [string, "f", number, number, number, string] | [string, "d", number, string] | [string, "l", string];

/** The tree object's text for `entries`, and its hash. */
export function encodeTree(entries: ReadonlyMap<string, Entry>): { hash: string; text: string } {
  const names = [...entries.keys()].sort();
  const rows: Row[] = names.map((name) => {
    const e = entries.get(name) as Entry;
    if (e.kind === "file") return [name, "f", e.mode, e.size, e.mtime, e.hash];
    if (e.kind === "dir") return [name, "d", e.mode, e.tree.hash];
    return [name, "l", e.target];
  });
  const text = JSON.stringify(rows);
  return { hash: sha256(text), text };
}

/** A tree object's entries; subtrees are named by hash only (`resolve` loads them). */
export type ShallowEntry = FileEntry | LinkEntry | { kind: "dir"; mode: number; hash: string };

const HASH = /^[0-9a-f]{64}$/;

function badTree(hash: string, why: string): SteadError {
  return new SteadError("STEAD_SNAPSHOT_DAMAGED", `workspace tree object ${hash.slice(0, 12)} is malformed: ${why}`, {
    fix: "the store holds a damaged snapshot; restore another snapshot of the run",
  });
}

/** A name that can only denote one entry of its directory: never "", ".", "..", or with a separator. */
export function isSafeName(name: string): boolean {
  return name !== "" && name !== "." && name !== ".." && !name.includes("/") && !name.includes("\\") && !name.includes("\0");
}

export function decodeTree(hash: string, text: string): Map<string, ShallowEntry> {
  let rows: unknown;
  try {
    rows = JSON.parse(text);
  } catch {
    throw badTree(hash, "not JSON");
  }
  if (!Array.isArray(rows)) throw badTree(hash, "not a list");
  const out = new Map<string, ShallowEntry>();
  for (const r of rows as unknown[]) {
    if (!Array.isArray(r) || typeof r[0] !== "string" || !isSafeName(r[0])) throw badTree(hash, `bad entry ${JSON.stringify(r).slice(0, 80)}`);
    const [name, kind] = r as [string, string];
    if (kind === "f" && typeof r[2] === "number" && typeof r[3] === "number" && typeof r[4] === "number" && typeof r[5] === "string" && HASH.test(r[5])) {
      out.set(name, { kind: "file", mode: r[2], size: r[3], mtime: r[4], hash: r[5] });
    } else if (kind === "d" && typeof r[2] === "number" && typeof r[3] === "string" && HASH.test(r[3])) {
      out.set(name, { kind: "dir", mode: r[2], hash: r[3] });
    } else if (kind === "l" && typeof r[2] === "string") {
      out.set(name, { kind: "link", target: r[2] });
    } else {
      throw badTree(hash, `bad entry ${JSON.stringify(r).slice(0, 80)}`);
    }
  }
  return out;
}

/** Whether two entries describe the same content, mode and (for files) recorded stat. */
export function sameEntry(a: Entry, b: Entry): boolean {
  if (a.kind === "file" && b.kind === "file") return a.hash === b.hash && a.mode === b.mode && a.size === b.size && a.mtime === b.mtime;
  if (a.kind === "dir" && b.kind === "dir") return a.tree.hash === b.tree.hash && a.mode === b.mode;
  if (a.kind === "link" && b.kind === "link") return a.target === b.target;
  return false;
}

/** Same content and mode (a new mtime alone is not a change a person would see). */
export function sameContent(a: Entry, b: Entry): boolean {
  if (a.kind === "file" && b.kind === "file") return a.hash === b.hash && a.mode === b.mode;
  if (a.kind === "dir" && b.kind === "dir") return a.tree.hash === b.tree.hash && a.mode === b.mode;
  if (a.kind === "link" && b.kind === "link") return a.target === b.target;
  return false;
}

/** Every file and link of a tree with its path ("/"-separated), depth first, names in order. */
export function* walkFiles(tree: Tree, prefix = ""): Generator<[string, FileEntry | LinkEntry]> {
  for (const name of [...tree.entries.keys()].sort()) {
    const e = tree.entries.get(name) as Entry;
    const path = prefix ? `${prefix}/${name}` : name;
    if (e.kind === "dir") yield* walkFiles(e.tree, path);
    else yield [path, e];
  }
}

const counts = new WeakMap<Tree, { files: number; bytes: number }>();

/** Files and links of a tree, and the sum of file sizes (remembered per tree object: trees never change). */
export function countFiles(tree: Tree): { files: number; bytes: number } {
  const known = counts.get(tree);
  if (known) return known;
  let files = 0;
  let bytes = 0;
  for (const e of tree.entries.values()) {
    if (e.kind === "dir") {
      const sub = countFiles(e.tree);
      files += sub.files;
      bytes += sub.bytes;
    } else {
      files++;
      if (e.kind === "file") bytes += e.size;
    }
  }
  const out = { files, bytes };
  counts.set(tree, out);
  return out;
}

export const EMPTY_TREE: Tree = { hash: encodeTree(new Map()).hash, entries: new Map() };
