/**
 * gc on a real SQLite store: pruning finished runs' older snapshots, deleting unreferenced blobs,
 * and sparing blobs a capture still in flight relies on.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { Store } from "../src/store/types.js";
import { gcWorkspaces, hashesOf, restoreSnapshot, WorkspaceTracker, type CaptureResult } from "../src/workspace/index.js";
import { openTempSqliteStore, tempDir } from "./helpers/temp-store.js";
import { commitCapture, listTree, newRun, writeTree } from "./helpers/workspace.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup() {
  const s = await openTempSqliteStore();
  const d = tempDir("stead-ws-gc-");
  cleanups.push(() => s.cleanup(), d.remove);
  return { store: s.store, path: s.path, dir: d.dir };
}

/** Waits until the store's clock has moved past now: blobs touched until now are then older than a zero grace. */
async function tick(store: Store): Promise<void> {
  const t = await store.storeTime();
  while ((await store.storeTime()) <= t) await new Promise((r) => setTimeout(r, 2));
}

const blobCount = async (store: Store) => (await store.listBlobs(null, 1_000_000, Number.MAX_SAFE_INTEGER)).length;

function ok(r: CaptureResult): Extract<CaptureResult, { ok: true }> {
  if (!r.ok) throw new Error(r.reason);
  return r;
}

/** A run whose workspace file f.txt holds "v<i>" after step i, for `steps` steps, each committed. */
async function runWithSteps(store: Store, dir: string, runId: string, steps: number): Promise<{ root: string; results: Extract<CaptureResult, { ok: true }>[] }> {
  const root = join(dir, runId);
  writeTree(root, { "shared.txt": "same in every run", "f.txt": "v0" });
  await store.createRun(newRun(runId, root), []);
  const t = await WorkspaceTracker.open(store, runId, root);
  const results = [];
  for (let i = 0; i < steps; i++) {
    writeFileSync(join(root, "f.txt"), `v${i}`);
    const r = ok(await t.capture({ seq: i, stepId: `s${i}`, source: "step" }));
    await commitCapture(store, runId, r);
    t.committed(r);
    results.push(r);
  }
  return { root, results };
}

describe("gc", () => {
  it("without --keep-steps deletes nothing that a snapshot refers to", async () => {
    const { store, dir } = await setup();
    await runWithSteps(store, dir, "a", 3);
    const before = await blobCount(store);
    await tick(store);
    expect(await gcWorkspaces(store, { graceMs: 0 })).toMatchObject({ snapshotsDeleted: 0, blobsDeleted: 0, blobsReferenced: before });
    expect(await blobCount(store)).toBe(before);
  });

  it("prunes a finished run's older snapshots, deletes the blobs only they used, keeps live runs whole; kept snapshots still restore", async () => {
    const { store, dir } = await setup();
    const done = await runWithSteps(store, dir, "done", 4);
    const live = await runWithSteps(store, dir, "live", 4);
    await store.commit([[{ runId: "done", run: { status: "completed" } }]]);
    await tick(store);
    const r = await gcWorkspaces(store, { keepSteps: 1, graceMs: 0 });
    // done: s0..s2 go, and with them their root trees (a tree records mtimes, so the two runs'
    // trees differ); the f.txt contents v0..v2 stay: live's snapshots refer to them.
    expect(r.snapshotsDeleted).toBe(3);
    expect(r.blobsDeleted).toBe(3);
    expect((await store.snapshots("done")).map((s) => s.stepId)).toEqual(["s3"]);
    expect((await store.snapshots("live")).map((s) => s.stepId)).toEqual(["s0", "s1", "s2", "s3"]);
    // Once live finishes and is pruned too, what only the old snapshots used goes.
    await store.commit([[{ runId: "live", run: { status: "failed" } }]]);
    const before = await blobCount(store);
    await tick(store);
    const r2 = await gcWorkspaces(store, { keepSteps: 1, graceMs: 0 });
    expect(r2.snapshotsDeleted).toBe(3);
    // v0, v1, v2 and live's three old root trees.
    expect(r2.blobsDeleted).toBe(6);
    expect(r2.bytesFreed).toBeGreaterThan(0);
    expect(await blobCount(store)).toBe(before - 6);
    const last = done.results[3] as Extract<CaptureResult, { ok: true }>;
    const liveLast = live.results[3] as Extract<CaptureResult, { ok: true }>;
    expect(r2.blobsReferenced).toBe(hashesOf(liveLast.tree, hashesOf(last.tree)).size);
    const out = join(dir, "out");
    await restoreSnapshot(store, last.snapshot, out);
    expect(listTree(out)).toEqual({ "f.txt": "file 644 v3", "shared.txt": "file 644 same in every run" });
  });

  it("spares unreferenced blobs younger than the grace period: a capture whose commit is still to come keeps its blobs", async () => {
    const { store, dir } = await setup();
    const { root } = await runWithSteps(store, dir, "a", 1);
    const t = await WorkspaceTracker.open(store, "a", root, { base: await store.getSnapshot("a", { seq: 0 }) });
    writeFileSync(join(root, "f.txt"), "in flight");
    const inFlight = ok(await t.capture({ seq: 1, stepId: "s1", source: "step" }));
    const before = await blobCount(store);
    // Uploaded but not committed: unreferenced, and fresh.
    expect(await gcWorkspaces(store)).toMatchObject({ blobsDeleted: 0 });
    expect(await blobCount(store)).toBe(before);
    await commitCapture(store, "a", inFlight);
    const out = join(dir, "restored");
    await restoreSnapshot(store, inFlight.snapshot, out);
    expect(listTree(out)["f.txt"]).toBe("file 644 in flight");
    // With no grace, the same situation would have lost them: the grace is what protects it.
    writeFileSync(join(root, "f.txt"), "in flight again");
    t.committed(inFlight);
    const second = ok(await t.capture({ seq: 2, stepId: "s2", source: "step" }));
    await tick(store);
    expect(await gcWorkspaces(store, { graceMs: 0 })).toMatchObject({ blobsDeleted: 2 });
    await commitCapture(store, "a", second);
    await expect(restoreSnapshot(store, second.snapshot, join(dir, "broken"))).rejects.toMatchObject({ code: "STEAD_SNAPSHOT_DAMAGED" });
  });

  it("a capture relying on an old unreferenced blob touches it, so gc spares it (SQLite: touch marks older than a minute are refreshed)", async () => {
    const { store, path, dir } = await setup();
    const { root } = await runWithSteps(store, dir, "a", 1);
    const t = await WorkspaceTracker.open(store, "a", root, { base: await store.getSnapshot("a", { seq: 0 }) });
    // An orphan: content no snapshot refers to, last touched two hours ago.
    const orphan = "content that some failed capture left behind";
    await store.putBlobs([{ hash: (await import("node:crypto")).createHash("sha256").update(orphan).digest("hex"), size: orphan.length, data: Buffer.concat([Buffer.of(0), Buffer.from(orphan)]) }]);
    const db = new Database(path);
    db.prepare("UPDATE blobs SET touched_at = ?").run(Date.now() - 2 * 3_600_000);
    db.close();
    // The workspace now holds that content: the capture relies on the orphan instead of uploading it.
    writeFileSync(join(root, "f.txt"), orphan);
    const r = ok(await t.capture({ seq: 1, stepId: "s1", source: "step" }));
    expect(await gcWorkspaces(store)).toMatchObject({ blobsDeleted: 0 });
    await commitCapture(store, "a", r);
    const out = join(dir, "out");
    await restoreSnapshot(store, r.snapshot, out);
    expect(listTree(out)["f.txt"]).toBe(`file 644 ${orphan}`);
  });
});
