/**
 * Capture on real directories into a real SQLite store: what a scan includes (ignore rules, size
 * ceiling, links, empty directories), change detection by stat, dedup, and gaps.
 */
import { createHash } from "node:crypto";
import { chmodSync, existsSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import Database from "better-sqlite3";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteStore } from "../src/store/sqlite/index.js";
import type { BlobInfo, Store } from "../src/store/types.js";
import { checkWorkspace, encodeCheckpoint, TreeLoader, WorkspaceTracker, type CaptureResult, type Tree } from "../src/workspace/index.js";
import { walkFiles } from "../src/workspace/tree.js";
import { decodeBlob } from "../src/workspace/blob-codec.js";
import { openTempSqliteStore, tempDir } from "./helpers/temp-store.js";
import { commitCapture, newRun, writeTree } from "./helpers/workspace.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup() {
  const s = await openTempSqliteStore();
  const d = tempDir("stead-ws-");
  cleanups.push(() => s.cleanup(), d.remove);
  await s.store.createRun(newRun("r1", d.dir), []);
  return { store: s.store, path: s.path, root: d.dir };
}

const OLD = Date.UTC(2020, 0, 1);

function ok(r: CaptureResult): Extract<CaptureResult, { ok: true }> {
  if (!r.ok) throw new Error(`capture failed: ${r.reason}`);
  return r;
}

const paths = (t: Tree) => [...walkFiles(t)].map(([p, e]) => (e.kind === "link" ? `${p} -> ${e.target}` : p));
const allBlobs = (store: Store): Promise<BlobInfo[]> => store.listBlobs(null, 1_000_000, Number.MAX_SAFE_INTEGER);

describe("scan", () => {
  it("honours nested .gitignore files (with negation), default excludes and extra patterns; keeps links and empty directories", async () => {
    const { store, root } = await setup();
    writeTree(root, {
      ".gitignore": "*.log\nbuild/\n!keep.log\n",
      "a.txt": "a",
      "debug.log": "x",
      "keep.log": "k",
      "build/out.js": "o",
      "src/.gitignore": "secret.txt\n!debug2.log\n",
      "src/main.ts": "m",
      "src/secret.txt": "s",
      "src/debug2.log": "d",
      "src/deep/secret.txt": "nested ignore applies below its directory",
      "node_modules/x/index.js": "nm",
      ".git/HEAD": "ref",
      ".stead/stead.db": "db",
      "pkg/__pycache__/m.pyc": "c",
      "tmp/scratch.txt": "t",
      "empty": { dir: true },
      "link-to-a": { link: "a.txt" },
      "dangling": { link: "no/such/file" },
    });
    const t = await WorkspaceTracker.open(store, "r1", root, { exclude: ["tmp/"] });
    const r = ok(await t.capture({ seq: -1, stepId: null, source: "start" }));
    expect(paths(r.tree).sort()).toEqual(
      [".gitignore", "a.txt", "dangling -> no/such/file", "keep.log", "link-to-a -> a.txt", "src/.gitignore", "src/debug2.log", "src/main.ts"].sort(),
    );
    expect(r.tree.entries.get("empty")).toMatchObject({ kind: "dir" });
    expect(r.snapshot).toMatchObject({ files: 8, filesChanged: 8, notes: null, source: "start", seq: -1 });
    // Without default excludes and .gitignore, everything is in.
    const all = ok(await (await WorkspaceTracker.open(store, "r1", root, { defaultExcludes: false, gitignore: false })).capture({ seq: -1, stepId: null, source: "start" }));
    expect(paths(all.tree)).toEqual(expect.arrayContaining(["node_modules/x/index.js", ".git/HEAD", "debug.log", "build/out.js", "src/secret.txt", "tmp/scratch.txt"]));
  });

  it("skips files over the size ceiling with a note, and reports them in the snapshot", async () => {
    const { store, root } = await setup();
    writeTree(root, { "small.txt": "12345", "big.bin": Buffer.alloc(2048, 7), "dir/also-big.bin": Buffer.alloc(1025, 1) });
    const r = ok(await (await WorkspaceTracker.open(store, "r1", root, { maxFileBytes: 1024 })).capture({ seq: 0, stepId: "s0", source: "step" }));
    expect(paths(r.tree)).toEqual(["small.txt"]);
    expect(r.notes).toEqual([
      { path: "big.bin", kind: "too-large", detail: "2048 bytes, over the 1024-byte ceiling" },
      { path: "dir/also-big.bin", kind: "too-large", detail: "1025 bytes, over the 1024-byte ceiling" },
    ]);
    expect(JSON.parse(r.snapshot.notes ?? "null")).toEqual({ notes: r.notes });
    // Skipped files are not gaps: no gap event.
    expect(r.events).toEqual([]);
  });

  it("skips credentials files by their names, listing each, and keeps shareable templates; skipSecretFiles: false captures them", async () => {
    const { store, path, root } = await setup();
    const secret = "sk-live-0123456789abcdefghijklmnopqrstuv";
    writeTree(root, {
      ".env": `OPENAI_API_KEY=${secret}\n`,
      ".env.production": `KEY=${secret}\n`,
      ".env.example": "OPENAI_API_KEY=\n",
      "deploy/id_ed25519": secret,
      "certs/server.pem": secret,
      ".npmrc": `//registry.npmjs.org/:_authToken=${secret}\n`,
      "src/env.ts": "export const env = process.env;",
    });
    const r = ok(await (await WorkspaceTracker.open(store, "r1", root)).capture({ seq: 0, stepId: "s0", source: "step" }));
    expect(paths(r.tree)).toEqual([".env.example", "src/env.ts"]);
    expect(r.notes.map((n) => `${n.path} ${n.kind}`).sort()).toEqual([".env secret", ".env.production secret", ".npmrc secret", "certs/server.pem secret", "deploy/id_ed25519 secret"]);
    await store.close();
    // What the world sees: no blob holds the secret once inflated, nor does the store's file.
    const db = new Database(path, { readonly: true });
    const blobs = db.prepare("SELECT hash, data FROM blobs").all() as { hash: string; data: Buffer }[];
    db.close();
    expect(blobs.length).toBeGreaterThan(0);
    expect(blobs.filter((b) => decodeBlob(b.hash, b.data).includes(secret))).toEqual([]);
    for (const f of [path, `${path}-wal`]) if (existsSync(f)) expect(readFileSync(f).includes(secret)).toBe(false);

    const again = await setup();
    writeTree(again.root, { ".env": `K=${secret}\n` });
    const all = ok(await (await WorkspaceTracker.open(again.store, "r1", again.root, { skipSecretFiles: false })).capture({ seq: 0, stepId: "s0", source: "step" }));
    expect(paths(all.tree)).toEqual([".env"]);
  });
});

describe("capture", () => {
  it("stores each content once: unchanged captures add nothing, a changed file adds its blob and the trees on its path", async () => {
    const { store, root } = await setup();
    writeTree(root, { "a/one.txt": "same", "a/two.txt": "same", "b/c/three.txt": "three", "top.txt": "top" });
    const t = await WorkspaceTracker.open(store, "r1", root);
    const first = ok(await t.capture({ seq: 0, stepId: "s0", source: "step" }));
    await commitCapture(store, "r1", first);
    t.committed(first);
    // 3 distinct contents + 4 trees (root, a, b, b/c).
    expect((await allBlobs(store)).length).toBe(3 + 4);
    expect(first.snapshot).toMatchObject({ files: 4, bytes: 16, filesChanged: 4 });

    const again = ok(await t.capture({ seq: 1, stepId: "s1", source: "step" }));
    expect(again.snapshot).toMatchObject({ root: first.snapshot.root, filesChanged: 0, newBytes: 0 });
    expect((await allBlobs(store)).length).toBe(7);

    writeFileSync(join(root, "b/c/three.txt"), "THREE, longer");
    const third = ok(await t.capture({ seq: 2, stepId: "s2", source: "step" }));
    expect(third.snapshot.filesChanged).toBe(1);
    expect(third.snapshot.root).not.toBe(first.snapshot.root);
    // One content and the trees b/c, b, root: a's tree is reused.
    expect((await allBlobs(store)).length).toBe(7 + 1 + 3);
    expect(third.snapshot.newBytes).toBeGreaterThan(0);
  });

  it("counts added, changed, removed and mode-only changes against the committed base", async () => {
    const { store, root } = await setup();
    writeTree(root, { "keep.txt": "k", "edit.txt": "e", "gone.txt": "g", "dir/x.txt": "x", "dir/y.txt": "y", "run.sh": { content: "#!/bin/sh", mode: 0o644 } });
    const t = await WorkspaceTracker.open(store, "r1", root);
    const base = ok(await t.capture({ seq: 0, stepId: "s0", source: "step" }));
    t.committed(base);
    writeFileSync(join(root, "edit.txt"), "edited");
    rmSync(join(root, "gone.txt"));
    rmSync(join(root, "dir"), { recursive: true });
    writeFileSync(join(root, "new.txt"), "n");
    chmodSync(join(root, "run.sh"), 0o755);
    const r = ok(await t.capture({ seq: 1, stepId: "s1", source: "step" }));
    // edit, gone, dir/x, dir/y, new, run.sh (mode).
    expect(r.snapshot.filesChanged).toBe(6);
    expect(r.tree.entries.get("run.sh")).toMatchObject({ kind: "file", mode: 0o755 });
  });

  it("trusts size and mtime: a file rewritten with the same size and its old mtime put back is not read again", async () => {
    const { store, root } = await setup();
    writeTree(root, { "f.txt": { content: "aaaa", mtime: OLD } });
    const t = await WorkspaceTracker.open(store, "r1", root);
    const base = ok(await t.capture({ seq: 0, stepId: "s0", source: "step" }));
    t.committed(base);
    writeFileSync(join(root, "f.txt"), "bbbb");
    utimesSync(join(root, "f.txt"), new Date(OLD), new Date(OLD));
    const same = ok(await t.capture({ seq: 1, stepId: "s1", source: "step" }));
    expect(same.snapshot.root).toBe(base.snapshot.root);
    // A new mtime (same size) makes it read: the change is seen.
    utimesSync(join(root, "f.txt"), new Date(OLD + 5000), new Date(OLD + 5000));
    const seen = ok(await t.capture({ seq: 2, stepId: "s2", source: "step" }));
    expect(seen.snapshot.filesChanged).toBe(1);
    expect(seen.tree.entries.get("f.txt")).toMatchObject({ hash: createHash("sha256").update("bbbb").digest("hex"), mtime: OLD + 5000 });
  });

  it("re-reads a file whose mtime is as recent as the base's capture (a write in the same instant would not show in its stat)", async () => {
    const { store, root } = await setup();
    const t = await WorkspaceTracker.open(store, "r1", root);
    const now = Date.now();
    writeTree(root, { "f.txt": { content: "aaaa", mtime: now } });
    const base = ok(await t.capture({ seq: 0, stepId: "s0", source: "step" }));
    t.committed(base);
    writeFileSync(join(root, "f.txt"), "bbbb");
    utimesSync(join(root, "f.txt"), new Date(now), new Date(now));
    const r = ok(await t.capture({ seq: 1, stepId: "s1", source: "step" }));
    expect(r.snapshot.filesChanged).toBe(1);
    expect(r.snapshot.root).not.toBe(base.snapshot.root);
  });

  it("a tracker opened on a committed snapshot loads its tree from the store and compares against it", async () => {
    const { store, root } = await setup();
    writeTree(root, { "a.txt": { content: "a", mtime: OLD }, "d/b.txt": { content: "b", mtime: OLD } });
    const t1 = await WorkspaceTracker.open(store, "r1", root);
    const first = ok(await t1.capture({ seq: 0, stepId: "s0", source: "step" }));
    await commitCapture(store, "r1", first);
    const row = await store.getSnapshot("r1", { stepId: "s0" });
    const t2 = await WorkspaceTracker.open(store, "r1", root, { base: row });
    expect(t2.baseTree?.hash).toBe(first.tree.hash);
    const r = ok(await t2.capture({ seq: 1, stepId: "s1", source: "step" }));
    expect(r.snapshot).toMatchObject({ filesChanged: 0, newBytes: 0, root: first.snapshot.root });
    const loaded = await new TreeLoader(store).load(first.snapshot.root);
    expect(paths(loaded)).toEqual(["a.txt", "d/b.txt"]);
  });
});

describe("gaps", () => {
  it("a file that vanishes while the capture runs becomes a gap note and a workspace.gap event; the capture still succeeds", async () => {
    const { store, path, root } = await setup();
    // big.bin is read first (name order) and fills a batch, so the store is asked about it before
    // victim.txt, listed in the same directory, is looked at: that is when another process deletes it.
    writeTree(root, { "big.bin": Buffer.alloc(9 * 1024 * 1024, 3), "victim.txt": "v", "z.txt": "z" });
    class DeletingStore extends SqliteStore {
      override async missingBlobs(hashes: readonly string[]): Promise<string[]> {
        rmSync(join(root, "victim.txt"), { force: true });
        return super.missingBlobs(hashes);
      }
    }
    const racing = new DeletingStore({ path });
    cleanups.push(() => racing.close());
    const t = await WorkspaceTracker.open(racing, "r1", root);
    const r = ok(await t.capture({ seq: 3, stepId: "edit", source: "step" }));
    expect(paths(r.tree)).toEqual(["big.bin", "z.txt"]);
    expect(r.notes).toEqual([{ path: "victim.txt", kind: "gap", detail: "vanished while it was read" }]);
    expect(r.events).toEqual([{ type: "workspace.gap", data: { seq: 3, step: "edit", source: "step", paths: ["victim.txt: vanished while it was read"], count: 1 } }]);
    await commitCapture(store, "r1", r);
    expect((await store.events({ runId: "r1" })).map((e) => e.type)).toEqual(["workspace.gap"]);
  });

  it.skipIf(process.getuid?.() === 0)("an unreadable file becomes a gap note (skipped as root: root reads any file)", async () => {
    const { store, root } = await setup();
    writeTree(root, { "ok.txt": "fine", "locked.txt": { content: "secret", mode: 0o000 } });
    const r = ok(await (await WorkspaceTracker.open(store, "r1", root)).capture({ seq: 0, stepId: "s0", source: "step" }));
    expect(paths(r.tree)).toEqual(["ok.txt"]);
    expect(r.notes).toEqual([{ path: "locked.txt", kind: "gap", detail: "could not be read (EACCES)" }]);
  });

  it("a capture that cannot look at all (missing workspace, closed store) returns a gap, never throws", async () => {
    const { store, path, root } = await setup();
    const missing = await (await WorkspaceTracker.open(store, "r1", join(root, "nope"))).capture({ seq: 1, stepId: "s1", source: "step" });
    expect(missing).toMatchObject({ ok: false, events: [{ type: "workspace.gap", data: { seq: 1, step: "s1", source: "step" } }] });
    expect(missing.ok ? "" : missing.reason).toMatch(/workspace .*nope does not exist/);

    writeTree(root, { "a.txt": "a" });
    const closed = new SqliteStore({ path });
    const t = await WorkspaceTracker.open(closed, "r1", root);
    await closed.close();
    const r = await t.capture({ seq: 2, stepId: "s2", source: "step" });
    expect(r.ok).toBe(false);
    expect(r.events[0]?.type).toBe("workspace.gap");
  });
});

describe("workspace paths and checkpoint metadata", () => {
  it("checkWorkspace accepts an existing directory (as an absolute path) and refuses a missing path or a file, naming the fix", async () => {
    const { root } = await setup();
    writeTree(root, { "f.txt": "f" });
    expect(checkWorkspace(root)).toBe(root);
    expect(() => checkWorkspace(join(root, "nope"))).toThrow(expect.objectContaining({ code: "STEAD_BAD_PATH", message: `workspace ${join(root, "nope")} does not exist`, fix: "pass the path of an existing directory as the workspace" }) as Error);
    expect(() => checkWorkspace(join(root, "f.txt"))).toThrow(expect.objectContaining({ code: "STEAD_BAD_PATH", message: `workspace ${join(root, "f.txt")} is not a directory` }) as Error);
  });

  it("checkpoint metadata is stored beside the snapshot, after redaction, up to 4 KB; more is refused, never truncated", async () => {
    const { store, root } = await setup();
    writeTree(root, { "f.txt": "f" });
    const meta = encodeCheckpoint({ commit: "abc123", token: "sk-secret" }, (t) => t.replaceAll("sk-secret", "[redacted]"));
    expect(meta).toBe('{"commit":"abc123","token":"[redacted]"}');
    const r = ok(await (await WorkspaceTracker.open(store, "r1", root)).capture({ seq: 0, stepId: "s0", source: "step" }, { checkpoint: meta }));
    await commitCapture(store, "r1", r);
    expect(await store.getSnapshot("r1", { stepId: "s0" })).toMatchObject({ checkpoint: meta });
    expect(encodeCheckpoint(undefined)).toBeNull();
    expect(encodeCheckpoint({ k: "x".repeat(4096 - 8) })).toHaveLength(4096);
    expect(() => encodeCheckpoint({ k: "x".repeat(4096 - 7) }, undefined, "r1")).toThrow(expect.objectContaining({ code: "STEAD_PAYLOAD_TOO_LARGE", runId: "r1" }) as Error);
    expect(() => encodeCheckpoint({ n: 1 as unknown as string })).toThrow(expect.objectContaining({ code: "STEAD_BAD_OPTION" }) as Error);
  });
});
