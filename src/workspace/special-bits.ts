/**
 * Setuid and setgid bits on restore. A snapshot records the modes it found, and a store can be
 * edited: a file restored with 04755 by root is a root-owned program that runs as root for anyone,
 * and a setgid directory hands its group to every file made in it. So a restore writes modes
 * without those bits unless asked (`keepSpecialBits`); the sticky bit stays.
 */
import type { Entry, Tree } from "./tree.js";

/** setuid (04000) and setgid (02000). */
export const SPECIAL_BITS = 0o6000;

/**
 * `tree` with the setuid and setgid bits cleared from every file and directory; the same object
 * when it has none. Each tree keeps its hash, the name of the object the store holds: a capture
 * that finds a directory as restored refers to that object, which exists, rather than to one no
 * one wrote (the snapshot then still records the bits, and a later restore clears them again).
 */
export function withoutSpecialBits(tree: Tree): Tree {
  let changed = false;
  const entries = new Map<string, Entry>();
  for (const [name, e] of tree.entries) {
    let next: Entry = e;
    if (e.kind === "dir") {
      const sub = withoutSpecialBits(e.tree);
      if (sub !== e.tree || (e.mode & SPECIAL_BITS) !== 0) next = { ...e, mode: e.mode & ~SPECIAL_BITS, tree: sub };
    } else if (e.kind === "file" && (e.mode & SPECIAL_BITS) !== 0) next = { ...e, mode: e.mode & ~SPECIAL_BITS };
    if (next !== e) changed = true;
    entries.set(name, next);
  }
  return changed ? { hash: tree.hash, entries } : tree;
}
