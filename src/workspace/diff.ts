/** Files and links added, changed (content or mode) or removed between two trees; equal subtrees are skipped by hash. */
import { sameContent, walkFiles, type Entry, type Tree } from "./tree.js";

export interface TreeDiff {
  added: string[];
  changed: string[];
  removed: string[];
}

export function diffTrees(a: Tree, b: Tree): TreeDiff {
  const out: TreeDiff = { added: [], changed: [], removed: [] };
  walk(a, b, "", out);
  out.added.sort();
  out.changed.sort();
  out.removed.sort();
  return out;
}

const join = (prefix: string, name: string) => (prefix ? `${prefix}/${name}` : name);

function all(e: Entry, path: string): string[] {
  return e.kind === "dir" ? [...walkFiles(e.tree, path)].map(([p]) => p) : [path];
}

function walk(a: Tree, b: Tree, prefix: string, out: TreeDiff): void {
  if (a.hash === b.hash) return;
  for (const [name, ea] of a.entries) {
    const path = join(prefix, name);
    const eb = b.entries.get(name);
    if (!eb) out.removed.push(...all(ea, path));
    else if (ea.kind === "dir" && eb.kind === "dir") walk(ea.tree, eb.tree, path, out);
    else if (ea.kind !== eb.kind || ea.kind === "dir" || eb.kind === "dir") {
      out.removed.push(...all(ea, path));
      out.added.push(...all(eb, path));
    } else if (!sameContent(ea, eb)) out.changed.push(path);
  }
  for (const [name, eb] of b.entries) if (!a.entries.has(name)) out.added.push(...all(eb, join(prefix, name)));
}
