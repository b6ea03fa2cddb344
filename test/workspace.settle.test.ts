/**
 * The settle watcher on a real directory with real fs.watch events, committing into a real SQLite
 * store. Nothing here asserts a duration: each case waits (with a generous bound) for the capture
 * it describes.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Store } from "../src/store/types.js";
import { TreeLoader, watchSettle, WorkspaceTracker, type CaptureResult, type SettleWatch } from "../src/workspace/index.js";
import { walkFiles } from "../src/workspace/tree.js";
import { until } from "./cli-helpers.js";
import { openTempSqliteStore, tempDir } from "./helpers/temp-store.js";
import { newRun, writeTree } from "./helpers/workspace.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup() {
  const s = await openTempSqliteStore();
  const d = tempDir("stead-ws-settle-");
  cleanups.push(() => s.cleanup(), d.remove);
  await s.store.createRun(newRun("r1", d.dir), []);
  writeTree(d.dir, { "start.txt": "s", "node_modules/dep/x.js": "x" });
  const tracker = await WorkspaceTracker.open(s.store, "r1", d.dir);
  const committed: Extract<CaptureResult, { ok: true }>[] = [];
  const failed: CaptureResult[] = [];
  const commit = async (r: CaptureResult) => {
    if (!r.ok) {
      failed.push(r);
      return false;
    }
    const [res] = await s.store.commit([[{ runId: "r1", snapshots: [r.snapshot], events: r.events }]]);
    if (res?.ok) committed.push(r);
    return res?.ok ?? false;
  };
  return { store: s.store, root: d.dir, tracker, committed, failed, commit };
}

const files = async (store: Store, root: string) => [...walkFiles(await new TreeLoader(store).load(root))].map(([p]) => p);

function track(w: SettleWatch): SettleWatch {
  cleanups.push(() => w.stop());
  return w;
}

describe("settle watcher", () => {
  it("captures a settle snapshot once the files are quiet, with what was written", async () => {
    const x = await setup();
    const w = track(watchSettle({ tracker: x.tracker, seq: 4, stepId: "long-tool", commit: x.commit, quietMs: 100 }));
    writeTree(x.root, { "out/a.txt": "a", "out/b.txt": "b" });
    await until("a settle snapshot", () => (x.committed.length > 0 ? true : undefined), 20_000);
    await w.stop();
    const first = x.committed[0] as Extract<CaptureResult, { ok: true }>;
    expect(first.snapshot).toMatchObject({ seq: 4, stepId: "long-tool", source: "settle" });
    expect(await files(x.store, first.snapshot.root)).toEqual(expect.arrayContaining(["out/a.txt", "out/b.txt", "start.txt"]));
    const rows = await x.store.snapshots("r1");
    expect(rows.length).toBe(x.committed.length);
    expect(rows.every((r) => r.source === "settle" && r.seq === 4)).toBe(true);
    expect(w.committed).toBe(x.committed.length);
  });

  it("captures at the maximum wait while changes never pause", async () => {
    const x = await setup();
    const w = track(watchSettle({ tracker: x.tracker, seq: 1, stepId: "busy", commit: x.commit, quietMs: 600_000, maxWaitMs: 200 }));
    let i = 0;
    const writer = setInterval(() => writeFileSync(join(x.root, "busy.txt"), String(i++)), 20);
    cleanups.push(() => clearInterval(writer));
    // The quiet period never comes (writes every 20 ms, quiet needs 10 minutes): only the maximum wait can capture.
    await until("a capture while writes go on", () => (x.committed.length > 0 ? true : undefined), 20_000);
    clearInterval(writer);
    await w.stop();
    expect(x.committed[0]?.snapshot.source).toBe("settle");
    expect(await files(x.store, x.committed[0]?.snapshot.root ?? "")).toContain("busy.txt");
  });

  it("watches directories created after it started", async () => {
    const x = await setup();
    const w = track(watchSettle({ tracker: x.tracker, seq: 2, stepId: "gen", commit: x.commit, quietMs: 100 }));
    mkdirSync(join(x.root, "gen", "deep"), { recursive: true });
    writeFileSync(join(x.root, "gen", "deep", "one.txt"), "1");
    await until("the first capture", () => (x.committed.length > 0 ? true : undefined), 20_000);
    const seen = x.committed.length;
    // Only the new directory's own watch sees this write.
    writeFileSync(join(x.root, "gen", "deep", "two.txt"), "2");
    await until("a capture of a write inside the new directory", () => (x.committed.length > seen ? true : undefined), 20_000);
    await w.stop();
    expect(await files(x.store, x.committed.at(-1)?.snapshot.root ?? "")).toEqual(expect.arrayContaining(["gen/deep/one.txt", "gen/deep/two.txt"]));
  });

  it("a capture that cannot look is handed to commit as a gap; stop() waits for a capture in progress", async () => {
    const x = await setup();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let calls = 0;
    const w = track(
      watchSettle({
        tracker: x.tracker,
        seq: 3,
        stepId: "s",
        quietMs: 50,
        commit: async (r) => {
          calls++;
          await gate;
          return x.commit(r);
        },
      }),
    );
    writeFileSync(join(x.root, "a.txt"), "a");
    await until("a commit call", () => (calls > 0 ? true : undefined), 20_000);
    let stopped = false;
    const stopping = w.stop().then(() => (stopped = true));
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(x.committed).toHaveLength(1);

    const missing = await WorkspaceTracker.open(x.store, "r1", join(x.root, "gone"));
    mkdirSync(join(x.root, "gone"));
    const w2 = track(watchSettle({ tracker: missing, seq: 5, stepId: "t", quietMs: 50, commit: x.commit }));
    writeFileSync(join(x.root, "gone", "f.txt"), "f");
    rmSync(join(x.root, "gone"), { recursive: true });
    await until("a failed capture", () => (x.failed.length > 0 ? true : undefined), 20_000);
    await w2.stop();
    expect(x.failed[0]).toMatchObject({ ok: false, events: [{ type: "workspace.gap", data: { seq: 5, step: "t", source: "settle" } }] });
  });
});
