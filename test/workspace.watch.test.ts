/**
 * Captures with the tracker's change watcher on (real fs.watch events on a real directory): only
 * changed paths are looked at, and every change written before a capture is in it.
 */
import { execFile } from "node:child_process";
import { chmodSync, mkdirSync, renameSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { WorkspaceTracker, type CaptureResult, type Tree } from "../src/workspace/index.js";
import { ChangeWatcher } from "../src/workspace/change-watcher.js";
import { EventBarrier } from "../src/workspace/event-barrier.js";
import { resolveScanOptions } from "../src/workspace/options.js";
import { walkFiles } from "../src/workspace/tree.js";
import { openTempSqliteStore, tempDir } from "./helpers/temp-store.js";
import { newRun, writeTree } from "./helpers/workspace.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const OLD = Date.UTC(2020, 0, 1);

async function setup(spec: Parameters<typeof writeTree>[1]) {
  const s = await openTempSqliteStore();
  const d = tempDir("stead-ws-watch-");
  cleanups.push(() => s.cleanup(), d.remove);
  await s.store.createRun(newRun("r1", d.dir), []);
  writeTree(d.dir, spec);
  const tracker = await WorkspaceTracker.open(s.store, "r1", d.dir, { maxFileBytes: 1024 });
  cleanups.push(() => tracker.close());
  tracker.watch();
  let seq = 0;
  const capture = async () => {
    const r = await tracker.capture({ seq, stepId: `s${seq}`, source: "step" });
    if (!r.ok) throw new Error(r.reason);
    seq++;
    tracker.committed(r);
    return r;
  };
  return { store: s.store, root: d.dir, tracker, capture };
}

const contents = (t: Tree) => Object.fromEntries([...walkFiles(t)].map(([p, e]) => [p, e.kind === "file" ? e.hash.slice(0, 8) : `-> ${e.target}`]));
const listing = (r: Extract<CaptureResult, { ok: true }>) => [...walkFiles(r.tree)].map(([p]) => p);

const TREE = {
  "a/one.txt": { content: "one", mtime: OLD },
  "a/two.txt": { content: "two", mtime: OLD },
  "b/c/three.txt": { content: "three", mtime: OLD },
  "d/four.txt": { content: "four", mtime: OLD },
  "e/big.bin": Buffer.alloc(2000, 1),
};

describe("captures with the change watcher", () => {
  it("the first capture lists everything; later ones only the directories on changed paths", async () => {
    const x = await setup(TREE);
    const first = await x.capture();
    expect(first.dirsListed).toBe(6);
    const none = await x.capture();
    expect(none).toMatchObject({ dirsListed: 0, snapshot: { filesChanged: 0, root: first.snapshot.root } });
    writeFileSync(join(x.root, "b/c/three.txt"), "THREE");
    const one = await x.capture();
    // The root, b and b/c: a, d and e are the base's, not even listed.
    expect(one).toMatchObject({ dirsListed: 3, snapshot: { filesChanged: 1 } });
    // The over-ceiling file's note (directory e, not listed) is carried over.
    expect(one.notes).toEqual([{ path: "e/big.bin", kind: "too-large", detail: "2000 bytes, over the 1024-byte ceiling" }]);
    // After close(), captures scan in full again.
    x.tracker.close();
    expect((await x.capture()).dirsListed).toBe(6);
  });

  it("reads a file an event names even when its size and mtime are as before", async () => {
    const x = await setup(TREE);
    const base = await x.capture();
    writeFileSync(join(x.root, "a/one.txt"), "ONE");
    utimesSync(join(x.root, "a/one.txt"), new Date(OLD), new Date(OLD));
    const r = await x.capture();
    expect(r.snapshot.filesChanged).toBe(1);
    expect(contents(r.tree)["a/one.txt"]).not.toBe(contents(base.tree)["a/one.txt"]);
  });

  it("sees new directories, renamed directories, removals, mode changes and a .gitignore that re-includes files", async () => {
    const x = await setup({ ...TREE, ".gitignore": "gen/\n" });
    await x.capture();
    mkdirSync(join(x.root, "new/deep"), { recursive: true });
    writeFileSync(join(x.root, "new/deep/n.txt"), "n");
    writeFileSync(join(x.root, "out.txt"), "not in gen");
    mkdirSync(join(x.root, "gen"));
    writeFileSync(join(x.root, "gen/g.txt"), "ignored for now");
    renameSync(join(x.root, "b"), join(x.root, "bee"));
    rmSync(join(x.root, "d"), { recursive: true });
    chmodSync(join(x.root, "a/two.txt"), 0o755);
    const r = await x.capture();
    expect(listing(r).sort()).toEqual([".gitignore", "a/one.txt", "a/two.txt", "bee/c/three.txt", "new/deep/n.txt", "out.txt"]);
    expect(r.tree.entries.get("a")).toMatchObject({ kind: "dir" });
    // A write inside the directory created after the watch started is seen on its own.
    writeFileSync(join(x.root, "new/deep/n.txt"), "nn");
    const r2 = await x.capture();
    expect(r2).toMatchObject({ snapshot: { filesChanged: 1 } });
    // The .gitignore stops ignoring gen/: its files come in, and later writes there are watched.
    writeFileSync(join(x.root, ".gitignore"), "");
    const r3 = await x.capture();
    expect(listing(r3)).toContain("gen/g.txt");
    writeFileSync(join(x.root, "gen/g.txt"), "watched now");
    const r4 = await x.capture();
    expect(r4.snapshot.filesChanged).toBe(1);
  });

  it("every write that returned before a capture began is in that capture (30 write-then-capture rounds)", async () => {
    const x = await setup(TREE);
    await x.capture();
    for (let i = 0; i < 30; i++) {
      const file = ["a/one.txt", "b/c/three.txt", "d/four.txt"][i % 3] as string;
      writeFileSync(join(x.root, file), `round ${i}`);
      const r = await x.capture();
      const e = [...walkFiles(r.tree)].find(([p]) => p === file)?.[1];
      expect(e?.kind === "file" ? e.size : -1, `round ${i}`).toBe(`round ${i}`.length);
      expect(r.snapshot.filesChanged, `round ${i}`).toBe(1);
    }
  });
});

describe("the event barrier a capture waits for", () => {
  it("passes once the events of earlier writes have been delivered, in every watched directory", async () => {
    const d = tempDir("stead-ws-barrier-");
    cleanups.push(d.remove);
    mkdirSync(join(d.dir, "a"));
    const watcher = new ChangeWatcher(d.dir, resolveScanOptions({}));
    cleanups.push(() => watcher.close());
    watcher.start();
    for (let i = 0; i < 50; i++) {
      const mark = watcher.counter;
      writeFileSync(join(d.dir, "a", `f${i}`), "x");
      mkdirSync(join(d.dir, `dir${i}`));
      expect(await watcher.drain()).toBe(true);
      expect([...(watcher.since(mark) ?? [])].sort(), `round ${i}`).toEqual([`a/f${i}`, `dir${i}`].sort());
    }
  });

  it("cannot pass without a private directory to watch (TMPDIR unusable): captures then scan in full and miss nothing", async () => {
    const x = await setup(TREE);
    const notADir = join(tempDir("stead-ws-barrier-").dir, "file");
    writeFileSync(notADir, "");
    x.tracker.close();
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = notADir;
    try {
      const bare = new EventBarrier();
      bare.start();
      expect(await bare.pass()).toBe(false);
      bare.close();
      x.tracker.watch();
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
    const full = await x.capture();
    writeFileSync(join(x.root, "a/one.txt"), "changed while undrained");
    const r = await x.capture();
    expect(r.snapshot.filesChanged).toBe(1);
    expect(contents(r.tree)["a/one.txt"]).not.toBe(contents(full.tree)["a/one.txt"]);
    expect(r.ok && full.ok && r.dirsListed).toBe(full.ok && full.dirsListed);
  });

  it("keeps a process alive while a capture waits on it: a script that captures and nothing else finishes its capture", async () => {
    const d = tempDir("stead-ws-alive-");
    cleanups.push(d.remove);
    writeTree(join(d.dir, "tree"), { "a.txt": "one", "b/c.txt": "two" });
    // Nothing but the capture holds the event loop: no worker, no timer of the script's own. The
    // loader runs in this thread (tsx/cjs): an ESM loader's own thread would keep the process up.
    const code = `
      const { SqliteStore } = require("./src/store/sqlite/index.ts");
      const { WorkspaceTracker } = require("./src/workspace/index.ts");
      const dir = process.argv[1];
      void (async () => {
        const store = new SqliteStore({ path: dir + "/stead.db" });
        await store.migrate();
        await store.createRun({ id: "r1", definition: "d", module: null, fingerprint: null, input: "null", createdAt: Date.now(), workspace: dir + "/tree" }, []);
        const tracker = await WorkspaceTracker.open(store, "r1", dir + "/tree", {});
        tracker.watch();
        const r = await tracker.capture({ seq: 0, stepId: "s0", source: "step" });
        console.log(r.ok ? "captured " + r.snapshot.filesChanged : "refused");
        tracker.close();
        await store.close();
      })();
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ["--require", "tsx/cjs", "-e", code, d.dir], { cwd: fileURLToPath(new URL("..", import.meta.url)) });
    expect(stdout.trim()).toBe("captured 2");
  });

  it("a closed barrier does not pass", async () => {
    const b = new EventBarrier();
    b.start();
    expect(await b.pass()).toBe(true);
    b.close();
    expect(await b.pass()).toBe(false);
  });
});
