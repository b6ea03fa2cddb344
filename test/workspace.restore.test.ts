/**
 * Restore on real directories from a real SQLite store: into a missing or empty directory, in
 * place under policies `restore` and `keep`, diffs between snapshots, and the choice of snapshot
 * on resume.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { StepRow, Store } from "../src/store/types.js";
import {
  diffSnapshots,
  findSnapshot,
  prepareWorkspace,
  reconcileWorkspace,
  restoreSnapshot,
  resumeSnapshot,
  WorkspaceTracker,
  type CaptureResult,
} from "../src/workspace/index.js";
import { SteadError } from "../src/errors.js";
import { openTempSqliteStore, tempDir } from "./helpers/temp-store.js";
import { commitCapture, listTree, newRun, writeTree, type Spec } from "./helpers/workspace.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup() {
  const s = await openTempSqliteStore();
  const d = tempDir("stead-ws-");
  cleanups.push(() => s.cleanup(), d.remove);
  const root = join(d.dir, "repo");
  mkdirSync(root);
  await s.store.createRun(newRun("r1", root), []);
  return { store: s.store, root, scratch: d.dir };
}

const SPEC: Spec = {
  "README.md": "# hello\n",
  "bin/run.sh": { content: "#!/bin/sh\necho hi\n", mode: 0o755 },
  "private.txt": { content: "k", mode: 0o600 },
  "src/a.ts": "export const a = 1;\n",
  "src/b.ts": "export const b = 2;\n",
  "src/same.ts": "export const a = 1;\n",
  "docs/empty": { dir: true },
  "link": { link: "src/a.ts" },
};

async function captureStep(store: Store, t: WorkspaceTracker, seq: number, stepId: string): Promise<Extract<CaptureResult, { ok: true }>> {
  const r = await t.capture({ seq, stepId, source: "step" });
  if (!r.ok) throw new Error(r.reason);
  await commitCapture(store, "r1", r);
  t.committed(r);
  return r;
}

describe("restore into a missing or empty directory", () => {
  it("writes every file with its bytes, mode, mtime, links and empty directories", async () => {
    const { store, root, scratch } = await setup();
    writeTree(root, SPEC);
    const expected = listTree(root);
    const t = await WorkspaceTracker.open(store, "r1", root);
    const snap = await captureStep(store, t, 0, "s0");
    const missing = join(scratch, "restored", "deep");
    const r = await restoreSnapshot(store, snap.snapshot, missing);
    expect(r).toMatchObject({ target: missing, files: 7 });
    expect(listTree(missing)).toEqual(expected);
    expect(Math.round(statSync(join(missing, "src/a.ts")).mtimeMs)).toBe(Math.round(statSync(join(root, "src/a.ts")).mtimeMs));
    const empty = join(scratch, "empty");
    mkdirSync(empty);
    await restoreSnapshot(store, snap.snapshot, empty);
    expect(listTree(empty)).toEqual(expected);
    // Restored files trust their stat: a capture of the copy against the snapshot reads nothing new.
    const copy = await WorkspaceTracker.open(store, "r1", empty, { base: await store.getSnapshot("r1", { seq: 0 }) });
    const again = await copy.capture({ seq: 1, stepId: "s1", source: "step" });
    expect(again).toMatchObject({ ok: true, snapshot: { root: snap.snapshot.root, filesChanged: 0 } });
  });

  it("refuses a target that is not empty or not a directory, writing nothing", async () => {
    const { store, root, scratch } = await setup();
    writeTree(root, SPEC);
    const snap = await captureStep(store, await WorkspaceTracker.open(store, "r1", root), 0, "s0");
    const busy = join(scratch, "busy");
    writeTree(busy, { "mine.txt": "keep me" });
    const file = join(scratch, "file.txt");
    writeFileSync(file, "x");
    const before = readdirSync(scratch).sort();
    await expect(restoreSnapshot(store, snap.snapshot, busy)).rejects.toMatchObject({ code: "STEAD_BAD_PATH", message: `restore target ${busy} is not empty` });
    await expect(restoreSnapshot(store, snap.snapshot, file)).rejects.toMatchObject({ code: "STEAD_BAD_PATH", message: `restore target ${file} is not a directory` });
    expect(listTree(busy)).toEqual({ "mine.txt": "file 644 keep me" });
    expect(readdirSync(scratch).sort()).toEqual(before);
  });

  it("a snapshot whose blob is gone fails with a clear error and leaves the target missing, with no temp files", async () => {
    const { store, root, scratch } = await setup();
    writeTree(root, { "a.txt": "aaaa", "b.txt": "bbbb" });
    const snap = await captureStep(store, await WorkspaceTracker.open(store, "r1", root), 0, "s0");
    const a = snap.tree.entries.get("a.txt");
    if (a?.kind !== "file") throw new Error("no a.txt");
    expect(await store.deleteBlobs([a.hash], Number.MAX_SAFE_INTEGER)).toMatchObject({ count: 1 });
    const target = join(scratch, "out");
    const before = readdirSync(scratch).sort();
    const e = await restoreSnapshot(store, snap.snapshot, target).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SteadError);
    expect((e as SteadError).message).toMatch(/^the content of a\.txt \(blob [0-9a-f]{12}\) is missing from the store$/);
    expect(existsSync(target)).toBe(false);
    expect(readdirSync(scratch).sort()).toEqual(before);
  });
});

describe("restore in place", () => {
  async function diverged() {
    const x = await setup();
    writeTree(x.root, { ...SPEC, "big.bin": Buffer.alloc(4096, 1) });
    const t = await WorkspaceTracker.open(x.store, "r1", x.root, { maxFileBytes: 1024 });
    const snap = await captureStep(x.store, t, 0, "s0");
    const atSnapshot = listTree(x.root);
    // After the snapshot: one file edited, one mode changed, one removed, one added (in a new
    // directory), a link retargeted; an ignored directory and the over-ceiling file change too.
    writeFileSync(join(x.root, "src/a.ts"), "export const a = 42;\n");
    rmSync(join(x.root, "src/b.ts"));
    writeTree(x.root, { "notes/todo.md": "new", "node_modules/dep/index.js": "installed", "big.bin": Buffer.alloc(4096, 2) });
    rmSync(join(x.root, "link"));
    writeTree(x.root, { link: { link: "README.md" } });
    chmodSync(join(x.root, "bin/run.sh"), 0o644);
    return { ...x, snap, atSnapshot };
  }

  it("policy restore puts back changed and removed files, deletes added ones, and returns the lists; ignored and over-ceiling files stay", async () => {
    const { store, root, snap, atSnapshot } = await diverged();
    const r = await reconcileWorkspace(store, snap.snapshot, root, "restore", { maxFileBytes: 1024 });
    expect(r).toMatchObject({ changed: ["bin/run.sh", "link", "src/a.ts"], added: ["notes/todo.md"], removed: ["src/b.ts"], applied: true });
    const now = listTree(root, ["node_modules", "big.bin"]);
    const { "big.bin": _big, ...expected } = atSnapshot;
    expect(now).toEqual(expected);
    expect(listTree(join(root, "node_modules"))).toEqual({ dep: "dir 755", "dep/index.js": "file 644 installed" });
    expect(statSync(join(root, "big.bin")).size).toBe(4096);
    const again = await reconcileWorkspace(store, snap.snapshot, root, "restore", { maxFileBytes: 1024 });
    expect(again).toMatchObject({ changed: [], added: [], removed: [], applied: false });
  });

  it("policy keep reports the same lists and changes nothing", async () => {
    const { store, root, snap } = await diverged();
    const before = listTree(root);
    const r = await reconcileWorkspace(store, snap.snapshot, root, "keep", { maxFileBytes: 1024 });
    expect(r).toMatchObject({ changed: ["bin/run.sh", "link", "src/a.ts"], added: ["notes/todo.md"], removed: ["src/b.ts"], applied: false });
    expect(listTree(root)).toEqual(before);
  });
});

describe("diff", () => {
  it("lists files added, changed and removed between two snapshots, and finds snapshots by step", async () => {
    const { store, root } = await setup();
    writeTree(root, SPEC);
    const t = await WorkspaceTracker.open(store, "r1", root);
    await captureStep(store, t, 0, "first");
    writeFileSync(join(root, "src/a.ts"), "changed");
    rmSync(join(root, "src/b.ts"));
    rmSync(join(root, "docs"), { recursive: true });
    writeTree(root, { "docs/new.md": "n", "lib/x.ts": "x" });
    await captureStep(store, t, 1, "second");
    const a = await findSnapshot(store, "r1", { step: "first" });
    const b = await findSnapshot(store, "r1", { step: "second" });
    expect(await diffSnapshots(store, a, b)).toEqual({ added: ["docs/new.md", "lib/x.ts"], changed: ["src/a.ts"], removed: ["src/b.ts"] });
    expect(await diffSnapshots(store, b, a)).toEqual({ added: ["src/b.ts"], changed: ["src/a.ts"], removed: ["docs/new.md", "lib/x.ts"] });
    expect(await diffSnapshots(store, a, a)).toEqual({ added: [], changed: [], removed: [] });
    expect(await findSnapshot(store, "r1", { seq: 1 })).toMatchObject({ stepId: "second" });
    expect(await findSnapshot(store, "r1")).toMatchObject({ stepId: "second" });
    const e = await findSnapshot(store, "r1", { step: "third" }).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: "STEAD_SNAPSHOT_NOT_FOUND", message: 'run r1 has no workspace snapshot of step "third"' });
    expect((e as SteadError).fix).toContain("first, second");
  });
});

describe("resume", () => {
  const step = (seq: number, stepId: string, status: StepRow["status"]): StepRow => ({
    runId: "r1",
    seq,
    stepId,
    kind: "tool",
    status,
    attempt: 1,
    output: null,
    error: null,
    startedAt: 1,
    completedAt: status === "completed" ? 2 : null,
    checkpoint: null,
  });

  it("picks the latest start/step snapshot at or before the last completed step that the journal still agrees with", async () => {
    const { store, root } = await setup();
    writeTree(root, { "f.txt": "0" });
    const t = await WorkspaceTracker.open(store, "r1", root);
    const start = await t.capture({ seq: -1, stepId: null, source: "start" });
    await commitCapture(store, "r1", start);
    for (const [seq, id] of [[0, "s0"], [1, "s1"], [2, "s2"]] as const) {
      writeFileSync(join(root, "f.txt"), String(seq + 1));
      await captureStep(store, t, seq, id);
    }
    const settle = await t.capture({ seq: 3, stepId: "s3", source: "settle" });
    await commitCapture(store, "r1", settle);
    const all = await store.snapshots("r1");
    const pick = (journal: StepRow[]) => resumeSnapshot(all, journal)?.stepId ?? "start";
    expect(pick([step(0, "s0", "completed"), step(1, "s1", "completed"), step(2, "s2", "intent"), step(3, "s3", "intent")])).toBe("s1");
    expect(pick([step(0, "s0", "completed"), step(1, "s1", "completed"), step(2, "s2", "completed"), step(3, "s3", "intent")])).toBe("s2");
    // The journal has another step at seq 1 now: that snapshot no longer describes it.
    expect(pick([step(0, "s0", "completed"), step(1, "other", "completed")])).toBe("s0");
    expect(pick([])).toBe("start");
  });

  it("restores a missing workspace whole, puts back an existing one under restore, keeps it under keep; the tracker continues from the snapshot", async () => {
    const { store, root } = await setup();
    writeTree(root, SPEC);
    const t = await WorkspaceTracker.open(store, "r1", root);
    await captureStep(store, t, 0, "s0");
    const atS0 = listTree(root);
    writeFileSync(join(root, "src/a.ts"), "after s0, never committed");
    const journal = [step(0, "s0", "completed"), step(1, "s1", "intent")];

    const kept = await prepareWorkspace({ store, runId: "r1", root, journal, policy: "keep" });
    expect(kept).toMatchObject({ action: "kept", changed: ["src/a.ts"], added: [], removed: [] });
    expect(listTree(root)["src/a.ts"]).toBe("file 644 after s0, never committed");

    const put = await prepareWorkspace({ store, runId: "r1", root, journal });
    expect(put).toMatchObject({ action: "put-back", changed: ["src/a.ts"] });
    expect(put.events).toEqual([
      {
        type: "workspace.restored",
        data: { seq: 0, step: "s0", action: "put-back", workspace: root, changed: ["src/a.ts"], added: [], removed: [], counts: { changed: 1, added: 0, removed: 0 } },
      },
    ]);
    expect(listTree(root)).toEqual(atS0);

    rmSync(root, { recursive: true });
    const fresh = await prepareWorkspace({ store, runId: "r1", root, journal });
    expect(fresh.action).toBe("restored");
    expect(listTree(root)).toEqual(atS0);
    const next = await fresh.tracker.capture({ seq: 1, stepId: "s1", source: "step" });
    expect(next).toMatchObject({ ok: true, snapshot: { filesChanged: 0, newBytes: 0 } });

    const unchanged = await prepareWorkspace({ store, runId: "r1", root, journal });
    expect(unchanged.action).toBe("unchanged");
  });

  it("with no snapshot, creates a missing workspace empty", async () => {
    const { store, scratch } = await setup();
    const dir = join(scratch, "later");
    const p = await prepareWorkspace({ store, runId: "r1", root: dir, journal: [] });
    expect(p).toMatchObject({ action: "none", snapshot: undefined, events: [] });
    expect(readdirSync(dir)).toEqual([]);
  });
});
