/**
 * Restore a snapshot: into an empty or missing directory (another machine, a copy), or in place
 * over the directory it was taken from (policy `restore` puts back what changed since; `keep`
 * only reports it).
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, renameSync, rmdirSync, rmSync, statSync, unlinkSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import { SteadError } from "../errors.js";
import type { SnapshotRow, SnapshotsAndBlobs } from "../store/types.js";
import { diffTrees } from "./diff.js";
import { writeEntries, makeDirs, applyDirModes, dirsOf } from "./materialize.js";
import { decodeNotes } from "./notes.js";
import { resolveScanOptions, type ScanOptions } from "./options.js";
import { scanTree } from "./scan.js";
import { walkFiles, type Entry, type Tree } from "./tree.js";
import { TreeLoader } from "./tree-loader.js";
import { withoutSpecialBits } from "./special-bits.js";

export type WorkspacePolicy = "restore" | "keep";

/** Whether `dir` is missing or an empty directory; refuses anything else with a one-line fix. */
export function checkRestoreTarget(dir: string): "missing" | "empty" {
  if (!existsSync(dir)) return "missing";
  let st;
  try {
    st = statSync(dir);
  } catch (e) {
    throw new SteadError("STEAD_BAD_PATH", `restore target ${dir} cannot be read (${(e as Error).message})`, { path: dir, fix: "pass --to a new or empty directory" });
  }
  if (!st.isDirectory()) {
    throw new SteadError("STEAD_BAD_PATH", `restore target ${dir} is not a directory`, { path: dir, fix: "pass --to a new or empty directory" });
  }
  if (readdirSync(dir).length > 0) {
    throw new SteadError("STEAD_BAD_PATH", `restore target ${dir} is not empty`, { path: dir, fix: "pass --to a new or empty directory (nothing was written)" });
  }
  return "empty";
}

export interface RestoreModeOptions {
  /** Write setuid and setgid bits as the snapshot records them. Default false: cleared (see special-bits.ts). */
  keepSpecialBits?: boolean;
}

/** The tree a restore writes: the snapshot's, without setuid and setgid bits unless kept. */
export function treeToWrite(tree: Tree, options: RestoreModeOptions = {}): Tree {
  return options.keepSpecialBits ? tree : withoutSpecialBits(tree);
}

export interface RestoreResult {
  target: string;
  files: number;
  tree: Tree;
}

/**
 * Writes the snapshot into `target`, which must be missing or empty. The files go to a temporary
 * sibling directory first, renamed into place once complete: a failure (a missing blob) leaves
 * the target as it was.
 */
export async function restoreSnapshot(store: SnapshotsAndBlobs, snapshot: Pick<SnapshotRow, "root">, target: string, tree?: Tree, options: RestoreModeOptions = {}): Promise<RestoreResult> {
  const dir = resolve(target);
  const state = checkRestoreTarget(dir);
  const t = treeToWrite(tree ?? (await new TreeLoader(store).load(snapshot.root)), options);
  mkdirSync(dirname(dir), { recursive: true });
  const tmp = join(dirname(dir), `.${basename(dir)}.stead-restore-${process.pid}-${randomBytes(4).toString("hex")}`);
  // A snapshot records no mode for its root: an existing (empty) target keeps its own, a new one
  // gets what mkdir gives under the user's umask. Private while the files go in.
  mkdirSync(tmp);
  const rootMode = statSync(state === "empty" ? dir : tmp).mode & 0o7777;
  chmodSync(tmp, 0o700);
  try {
    makeDirs(tmp, t);
    const items = [...walkFiles(t)];
    await writeEntries(store, tmp, items);
    applyDirModes(tmp, t);
    chmodSync(tmp, rootMode);
    if (state === "empty") rmdirSync(dir);
    renameSync(tmp, dir);
    return { target: dir, files: items.length, tree: t };
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
}

export interface ReconcileResult {
  /** Files whose content or mode differs from the snapshot. */
  changed: string[];
  /** Files that are not in the snapshot. */
  added: string[];
  /** Files of the snapshot that are gone. */
  removed: string[];
  /** Whether the files were put back (policy `restore` and any difference). */
  applied: boolean;
  tree: Tree;
}

/**
 * Compares `root` with the snapshot and, under policy `restore`, brings it back: changed and
 * removed files are written from the snapshot, added files deleted (then directories the snapshot
 * does not have, if left empty). Ignored paths, and paths the snapshot or this scan has no content
 * for (gaps, files over the size ceiling), are never touched.
 */
export async function reconcileWorkspace(
  store: SnapshotsAndBlobs,
  snapshot: Pick<SnapshotRow, "root" | "createdAt" | "notes">,
  root: string,
  policy: WorkspacePolicy,
  options: ScanOptions = {},
  tree?: Tree,
  modes: RestoreModeOptions = {},
): Promise<ReconcileResult> {
  const t = treeToWrite(tree ?? (await new TreeLoader(store).load(snapshot.root)), modes);
  const scan = await scanTree({ root, base: t, trustBefore: snapshot.createdAt - 1000, options: resolveScanOptions(options) });
  const unmanaged = [...decodeNotes(snapshot.notes).notes, ...scan.notes].map((n) => n.path);
  const managed = (p: string) => !unmanaged.some((u) => p === u || p.startsWith(`${u}/`));
  const d = diffTrees(t, scan.tree);
  const out = { changed: d.changed.filter(managed), added: d.added.filter(managed), removed: d.removed.filter(managed) };
  const any = out.changed.length + out.added.length + out.removed.length > 0;
  if (policy === "keep" || !any) return { ...out, applied: false, tree: t };

  for (const p of out.added) unlinkSync(join(root, p));
  // Directories the snapshot lacks, deepest first, if nothing (ignored files) is left in them.
  const wanted = new Set(dirsOf(t).map(([p]) => p));
  for (const [p] of dirsOf(scan.tree).reverse()) {
    if (wanted.has(p)) continue;
    try {
      rmdirSync(join(root, p));
    } catch {
      // Not empty: it holds ignored or unmanaged files, which stay.
    }
  }
  makeDirs(root, t);
  const byPath = new Map([...walkFiles(t)]);
  const items = [...out.changed, ...out.removed].map((p) => [p, byPath.get(p) as Exclude<Entry, { kind: "dir" }>] as [string, Exclude<Entry, { kind: "dir" }>]);
  await writeEntries(store, root, items);
  applyDirModes(root, t);
  return { ...out, applied: true, tree: t };
}
