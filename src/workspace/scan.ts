/**
 * Walks a workspace against the tree of a previous snapshot (its base) and builds the current
 * tree. A file whose size and mtime match its base entry keeps the base's hash without being read,
 * unless its mtime is too close to the base's capture time to trust (a write in the same
 * millisecond as the capture could leave both unchanged: git's "racy" case). Every other file is
 * read and hashed once; `onContent` sees its bytes.
 *
 * With `dirty` (the paths that had file-system events since the base was captured), only the
 * directories on those paths are listed and only those entries (and entries the base lacks)
 * examined; everything else is the base's, untouched. A dirty directory entry, or a dirty
 * `.gitignore`, is scanned in full.
 *
 * Never throws for a file or directory that vanishes or cannot be read while it runs: that path
 * becomes a `gap` note and is left out of the tree. Only an unusable root throws.
 */
import { lstatSync, readdirSync, readFileSync, readlinkSync, type Dirent, type Stats } from "node:fs";
import { join } from "node:path";
import { IgnoreRules } from "./ignore-rules.js";
import { badRoot, statRoot } from "./workspace-path.js";
import { isSecretFile, type ResolvedScanOptions } from "./options.js";
import { countFiles, EMPTY_TREE, encodeTree, sameContent, sameEntry, sha256, type Entry, type FileEntry, type Tree } from "./tree.js";

export type NoteKind = "too-large" | "unsupported" | "gap" | "secret";

export interface ScanNote {
  /** Relative to the workspace root, "/"-separated. */
  path: string;
  kind: NoteKind;
  detail: string;
}

export interface ScanResult {
  tree: Tree;
  /** Tree objects this scan made (not in the base): hash → text. */
  newTrees: Map<string, string>;
  notes: ScanNote[];
  /** Files and links added, changed (content, mode or type) or removed since the base. */
  changed: number;
  /** Directories listed by this scan (all of them without `dirty`): notes elsewhere are the base's. */
  listed: Set<string>;
}

export interface ScanInput {
  root: string;
  base: Tree | undefined;
  /** Base entries with an mtime at or after this (ms) are re-read even when their stat matches. */
  trustBefore: number;
  options: ResolvedScanOptions;
  /** Called with each file read (its hash, bytes and path), in walk order. */
  onContent?: (hash: string, content: Buffer, path: string) => Promise<void> | void;
  /** Paths with changes since the base (see above); absent: scan everything. */
  dirty?: ReadonlySet<string>;
}

/** Time between yields to the event loop: a large tree must not stall heartbeats. */
const SLICE_MS = 20;

export async function scanTree(input: ScanInput): Promise<ScanResult> {
  statRoot(input.root);
  const rules = IgnoreRules.root(input.options.exclude);
  const state: State = { newTrees: new Map(), notes: [], changed: 0, sliceStart: Date.now(), listed: new Set(), onPath: new Set() };
  if (input.dirty) {
    for (const p of input.dirty) for (let i = p.lastIndexOf("/"); ; i = p.lastIndexOf("/", i - 1)) {
      state.onPath.add(i < 0 ? "" : p.slice(0, i));
      if (i <= 0) break;
    }
  }
  const partial = input.dirty !== undefined && input.base !== undefined;
  const tree = await scanDir(input, state, input.root, "", input.base, rules, partial);
  return { tree, newTrees: state.newTrees, notes: state.notes, changed: state.changed, listed: state.listed };
}

interface State {
  newTrees: Map<string, string>;
  notes: ScanNote[];
  changed: number;
  sliceStart: number;
  listed: Set<string>;
  /** Directories with a dirty path at or below them. */
  onPath: Set<string>;
}

const errText = (e: unknown): string => {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return code === "ENOENT" ? "vanished while it was read" : `could not be read (${code ?? (e instanceof Error ? e.message : String(e))})`;
};

async function scanDir(
  input: ScanInput,
  state: State,
  abs: string,
  rel: string,
  base: Tree | undefined,
  parentRules: IgnoreRules,
  partialIn: boolean,
): Promise<Tree> {
  if (partialIn && base && !state.onPath.has(rel)) return base;
  const dirty = input.dirty;
  const partial = partialIn && base !== undefined && dirty !== undefined && !dirty.has(rel ? `${rel}/.gitignore` : ".gitignore");
  if (Date.now() - state.sliceStart > SLICE_MS) {
    await new Promise((r) => setImmediate(r));
    state.sliceStart = Date.now();
  }
  let dirents: Dirent[];
  try {
    dirents = readdirSync(abs, { withFileTypes: true });
  } catch (e) {
    if (rel === "") throw badRoot(abs, `cannot be listed (${(e as Error).message})`);
    state.notes.push({ path: rel, kind: "gap", detail: `directory ${errText(e)}` });
    return base ?? EMPTY_TREE;
  }
  state.listed.add(rel);
  // Name order: the walk (and with it the order files are read and uploaded) is the same every time.
  dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  let rules = parentRules;
  if (input.options.gitignore && dirents.some((d) => d.name === ".gitignore" && d.isFile())) {
    try {
      rules = rules.withGitignore(rel, readFileSync(join(abs, ".gitignore"), "utf8"));
    } catch (e) {
      state.notes.push({ path: rel ? `${rel}/.gitignore` : ".gitignore", kind: "gap", detail: `ignore rules ${errText(e)}` });
    }
  }
  const entries = new Map<string, Entry>();
  for (const d of dirents) {
    const name = d.name;
    const path = rel ? `${rel}/${name}` : name;
    if (rules.ignores(path, d.isDirectory())) continue;
    const full = join(abs, name);
    const known = base?.entries.get(name);
    if (partial && known && !dirty?.has(path)) {
      // No event for it since the base: the base's entry, unread (a directory only if nothing below it changed).
      entries.set(name, known.kind === "dir" && state.onPath.has(path) ? { ...known, tree: await scanDir(input, state, full, path, known.tree, rules, true) } : known);
      continue;
    }
    let st: Stats;
    try {
      st = lstatSync(full);
    } catch (e) {
      state.notes.push({ path, kind: "gap", detail: errText(e) });
      continue;
    }
    const before = base?.entries.get(name);
    if (st.isDirectory()) {
      const sub = await scanDir(input, state, full, path, before?.kind === "dir" ? before.tree : undefined, rules, false);
      if (before && before.kind !== "dir") state.changed++;
      entries.set(name, { kind: "dir", mode: st.mode & 0o7777, tree: sub });
    } else if (st.isFile()) {
      if (input.options.skipSecretFiles && isSecretFile(name)) {
        state.notes.push({ path, kind: "secret", detail: "a credentials file by its name; skipSecretFiles: false captures it" });
        continue;
      }
      if (st.size > input.options.maxFileBytes) {
        state.notes.push({ path, kind: "too-large", detail: `${st.size} bytes, over the ${input.options.maxFileBytes}-byte ceiling` });
        continue;
      }
      // An event named this file: read it whatever its stat says.
      const entry = await fileEntry(input, state, full, path, st, before, dirty?.has(path) ?? false);
      if (entry) entries.set(name, entry);
    } else if (st.isSymbolicLink()) {
      let target: string;
      try {
        target = readlinkSync(full);
      } catch (e) {
        state.notes.push({ path, kind: "gap", detail: `link ${errText(e)}` });
        continue;
      }
      const entry: Entry = { kind: "link", target };
      if (!before || !sameContent(before, entry)) state.changed++;
      entries.set(name, entry);
    } else {
      state.notes.push({ path, kind: "unsupported", detail: "not a file, directory or symbolic link" });
    }
  }
  if (base) {
    for (const [name, e] of base.entries) {
      if (entries.has(name)) continue;
      state.changed += e.kind === "dir" ? countFiles(e.tree).files : 1;
    }
    // A directory that was a file (or the reverse) counted its new side above; its old side here.
    for (const [name, e] of entries) {
      const old = base.entries.get(name);
      if (old && old.kind === "dir" && e.kind !== "dir") state.changed += countFiles(old.tree).files;
    }
  }
  if (base && base.entries.size === entries.size && [...entries].every(([n, e]) => sameEntryOrNone(base.entries.get(n), e))) return base;
  const { hash, text } = encodeTree(entries);
  if (hash === base?.hash) return base;
  state.newTrees.set(hash, text);
  return { hash, entries };
}

const sameEntryOrNone = (b: Entry | undefined, e: Entry): boolean => b !== undefined && sameEntry(b, e);

async function fileEntry(
  input: ScanInput,
  state: State,
  full: string,
  path: string,
  st: Stats,
  before: Entry | undefined,
  forced: boolean,
): Promise<FileEntry | undefined> {
  const mtime = Math.round(st.mtimeMs);
  const mode = st.mode & 0o7777;
  if (!forced && before?.kind === "file" && before.size === st.size && before.mtime === mtime && mtime < input.trustBefore) {
    if (before.mode !== mode) state.changed++;
    return before.mode === mode ? before : { ...before, mode };
  }
  let content: Buffer;
  try {
    content = readFileSync(full);
  } catch (e) {
    state.notes.push({ path, kind: "gap", detail: errText(e) });
    return undefined;
  }
  const entry: FileEntry = { kind: "file", mode, size: content.byteLength, mtime, hash: sha256(content) };
  if (!before || !sameContent(before, entry)) state.changed++;
  await input.onContent?.(entry.hash, content, path);
  return entry;
}
