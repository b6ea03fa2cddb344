/**
 * Workspace snapshot workloads, on the built library (dist/) and a real SQLite store:
 * - the cost of capturing an unchanged 10,000-file tree, against one full read of the same tree;
 * - the cost of capturing it with one file changed;
 * - bytes stored for 100 snapshots with one file changed per step, against tree + changed bytes.
 * File contents are random bytes: compression cannot hide what the manifests cost.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { stead as lib } from "./lib.js";

const ws = (await import(pathToFileURL(resolve(import.meta.dirname, "../dist/workspace/index.js")).href)) as typeof import("../src/workspace/index.js");

export interface TreeShape {
  /** Top-level directories. */
  dirs: number;
  /** Subdirectories in each. */
  subdirs: number;
  /** Files in each subdirectory. */
  files: number;
  minBytes: number;
  maxBytes: number;
}

/** 10 x 10 directories of 100 files, 1-4 KB each: 10,000 files, about 25 MB. */
export const TEN_THOUSAND: TreeShape = { dirs: 10, subdirs: 10, files: 100, minBytes: 1024, maxBytes: 4096 };

export function makeTree(root: string, shape: TreeShape): { files: string[]; bytes: number } {
  const files: string[] = [];
  let bytes = 0;
  for (let d = 0; d < shape.dirs; d++) {
    for (let s = 0; s < shape.subdirs; s++) {
      const dir = join(root, `pkg-${d}`, `mod-${s}`);
      mkdirSync(dir, { recursive: true });
      for (let f = 0; f < shape.files; f++) {
        const size = shape.minBytes + Math.floor(Math.random() * (shape.maxBytes - shape.minBytes));
        const path = join(dir, `file-${f}.dat`);
        writeFileSync(path, randomBytes(size));
        files.push(path);
        bytes += size;
      }
    }
  }
  return { files, bytes };
}

/** One full read of the tree: list every directory, read every file's bytes. */
export function fullReadMs(root: string): number {
  const t0 = performance.now();
  let total = 0;
  const walk = (dir: string) => {
    for (const d of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, d.name);
      if (d.isDirectory()) walk(p);
      else total += readFileSync(p).byteLength;
    }
  };
  walk(root);
  if (total === 0) throw new Error("the tree is empty");
  return performance.now() - t0;
}

export interface CaptureBench {
  /** Back-to-back pairs: [full read ms, unchanged capture ms], with the change watcher on (as a worker runs it). */
  pairs: [number, number][];
  /** Captures with one file changed, ms. */
  oneChanged: number[];
  /** Unchanged captures with no watcher (every file's stat compared), ms. */
  statScan: number[];
  files: number;
  treeBytes: number;
}

/**
 * A store, a run and a tracker on `root`. `capture()` times the capture alone (its snapshot rides
 * on a step's commit in the engine), then commits it.
 */
async function tracked(dir: string, root: string, watch = true) {
  const store = new lib.SqliteStore({ path: join(dir, "stead.db") });
  await store.migrate();
  await store.createRun({ id: "bench", definition: "bench", module: null, fingerprint: null, input: "null", createdAt: Date.now(), workspace: root }, []);
  const tracker = await ws.WorkspaceTracker.open(store, "bench", root, { watch });
  tracker.watch();
  let seq = 0;
  const capture = async (): Promise<[number, Extract<import("../src/workspace/index.js").CaptureResult, { ok: true }>]> => {
    const t0 = performance.now();
    const r = await tracker.capture({ seq, stepId: `s${seq}`, source: "step" });
    const ms = performance.now() - t0;
    if (!r.ok) throw new Error(`capture failed: ${r.reason}`);
    const [res] = await store.commit([[{ runId: "bench", snapshots: [r.snapshot], events: r.events }]]);
    if (!res?.ok) throw new Error("commit refused");
    tracker.committed(r);
    seq++;
    return [ms, r];
  };
  return { store, capture, close: () => tracker.close() };
}

export async function captureBench(dir: string, repeats: number): Promise<CaptureBench> {
  const root = join(dir, "tree");
  const { files, bytes } = makeTree(root, TEN_THOUSAND);
  // Files older than the racy window, as in a tree that was not written a moment ago.
  const old = new Date(Date.now() - 3_600_000);
  for (const f of files) utimesSync(f, old, old);
  const { store, capture, close } = await tracked(dir, root);
  const plain = await tracked(join(dir, "plain"), root, false);
  try {
    await capture();
    // Warm both paths once (page cache, JIT) before measuring.
    fullReadMs(root);
    await capture();
    await plain.capture();
    const statScan: number[] = [];
    for (let i = 0; i < repeats; i++) statScan.push((await plain.capture())[0]);
    const pairs: [number, number][] = [];
    for (let i = 0; i < repeats; i++) {
      const read = fullReadMs(root);
      const [ms, r] = await capture();
      if (r.snapshot.filesChanged !== 0) throw new Error(`an unchanged tree captured ${r.snapshot.filesChanged} changes`);
      pairs.push([read, ms]);
    }
    const oneChanged: number[] = [];
    for (let i = 0; i < repeats; i++) {
      const f = files[(i * 997) % files.length] as string;
      writeFileSync(f, randomBytes(statSync(f).size));
      const [ms, r] = await capture();
      if (r.snapshot.filesChanged !== 1) throw new Error(`one changed file captured ${r.snapshot.filesChanged} changes`);
      oneChanged.push(ms);
      // Age it past the racy window so the next unchanged capture trusts its stat.
      utimesSync(f, old, old);
      await capture();
    }
    return { pairs, oneChanged, statScan, files: files.length, treeBytes: bytes };
  } finally {
    close();
    plain.close();
    await store.close();
    await plain.store.close();
  }
}

export interface StorageBench {
  snapshots: number;
  treeBytes: number;
  changedBytes: number;
  /** Bytes of blob data (compressed or raw, as stored) plus snapshot rows. */
  storedBytes: number;
  /** Of those, tree objects and snapshot rows: what the manifests cost. */
  manifestBytes: number;
  /** Growth of the SQLite file (pages, indexes and all). */
  fileBytes: number;
}

export async function storageBench(dir: string, snapshots: number): Promise<StorageBench> {
  const root = join(dir, "tree");
  const { files, bytes } = makeTree(root, TEN_THOUSAND);
  const dbPath = join(dir, "stead.db");
  const { store, capture, close } = await tracked(dir, root);
  const Database = (await import("better-sqlite3")).default;
  const fileSize = () => {
    const db = new Database(dbPath);
    try {
      db.pragma("wal_checkpoint(TRUNCATE)");
    } finally {
      db.close();
    }
    return statSync(dbPath).size;
  };
  try {
    const empty = fileSize();
    let changedBytes = 0;
    await capture();
    const fileHashes = new Set<string>();
    for (let i = 1; i < snapshots; i++) {
      const f = files[(i * 7919) % files.length] as string;
      const size = statSync(f).size;
      writeFileSync(f, randomBytes(size));
      changedBytes += size;
      await capture();
    }
    const db = new Database(dbPath, { readonly: true });
    let storedBytes: number;
    let manifestBytes: number;
    try {
      const rows = db.prepare("SELECT hash, length(data) AS n FROM blobs").all() as { hash: string; n: number }[];
      // A snapshot row: its text columns and seven integers.
      const snap = db.prepare("SELECT coalesce(sum(length(run_id) + length(coalesce(step_id, '')) + length(source) + length(root) + length(coalesce(notes, '')) + 8 * 7), 0) AS n FROM snapshots").get() as { n: number };
      storedBytes = rows.reduce((a, r) => a + r.n, 0) + snap.n;
      // File contents are the blobs named in trees as files: everything else is a tree object.
      const loader = new ws.TreeLoader(store);
      for (const r of await store.snapshotRoots()) {
        const t = await loader.load(r);
        for (const [, e] of walk(t)) if (e.kind === "file") fileHashes.add(e.hash);
      }
      manifestBytes = rows.filter((r) => !fileHashes.has(r.hash)).reduce((a, r) => a + r.n, 0) + snap.n;
    } finally {
      db.close();
    }
    return { snapshots, treeBytes: bytes, changedBytes, storedBytes, manifestBytes, fileBytes: fileSize() - empty };
  } finally {
    close();
    await store.close();
  }
}

function* walk(tree: import("../src/workspace/index.js").Tree): Generator<[string, import("../src/workspace/index.js").Entry]> {
  for (const [name, e] of tree.entries) {
    if (e.kind === "dir") yield* walk(e.tree);
    else yield [name, e];
  }
}
