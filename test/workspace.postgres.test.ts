/**
 * Workspaces on the Postgres store: capture and restore through it, and `stead export` / `import`
 * moving runs with their snapshots and blobs from SQLite to Postgres and back, verified by digests
 * and by restoring the files from the target store.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { PostgresStore } from "../src/store/postgres/index.js";
import { SqliteStore } from "../src/store/sqlite/index.js";
import { exportStore, importStore, verifyStores } from "../src/store/transfer/index.js";
import type { Store } from "../src/store/types.js";
import { diffSnapshots, gcWorkspaces, restoreSnapshot, WorkspaceTracker, type CaptureResult } from "../src/workspace/index.js";
import { openTempSqliteStore, tempDir } from "./helpers/temp-store.js";
import { listTree, newRun, writeTree } from "./helpers/workspace.js";
import { freshDatabase } from "./setup/postgres.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function pgStore(label: string): Promise<PostgresStore> {
  const db = await freshDatabase(label);
  const store = new PostgresStore({ connectionString: db.url });
  cleanups.push(() => db.drop(), () => store.close());
  await store.migrate();
  return store;
}

function ok(r: CaptureResult): Extract<CaptureResult, { ok: true }> {
  if (!r.ok) throw new Error(r.reason);
  return r;
}

/** Three steps of edits under a claimed lease (snapshots ride on fenced step commits), on any store. */
async function threeSteps(store: Store, root: string): Promise<{ results: Extract<CaptureResult, { ok: true }>[]; states: Record<string, string>[] }> {
  writeTree(root, { "README.md": "# r\n", "bin/x.sh": { content: "#!/bin/sh\n", mode: 0o755 }, "data.bin": Buffer.from([0, 1, 2, 255, 254]), link: { link: "README.md" } });
  await store.createRun(newRun("r1", root), []);
  const [claim] = await store.claim({ owner: { workerId: "w1", host: "h", pid: 1, start: "s" }, definitions: ["ws-test"], limit: 1, leaseMs: 60_000, now: Date.now() });
  const fence = claim?.run.fence ?? -1;
  const t = await WorkspaceTracker.open(store, "r1", root);
  const results: Extract<CaptureResult, { ok: true }>[] = [];
  const states: Record<string, string>[] = [];
  for (let i = 0; i < 3; i++) {
    writeFileSync(join(root, `step-${i}.txt`), `step ${i} `.repeat(200));
    writeFileSync(join(root, "README.md"), `# r, edited at step ${i}\n`);
    const r = ok(await t.capture({ seq: i, stepId: `s${i}`, source: "step" }));
    const [res] = await store.commit([
      [
        {
          runId: "r1",
          expect: { lease: { fence, owner: "w1" } },
          steps: [{ seq: i, stepId: `s${i}`, kind: "tool", status: "completed", attempt: 1, output: "null", startedAt: 1, completedAt: 2 }],
          snapshots: [r.snapshot],
          events: [{ type: "step.completed", data: { step: `s${i}` } }],
        },
      ],
    ]);
    expect(res).toMatchObject({ ok: true });
    t.committed(r);
    results.push(r);
    states.push(listTree(root));
  }
  return { results, states };
}

async function dumpOf(store: Store): Promise<string> {
  let text = "";
  const out = new Writable({
    write(chunk: Buffer, _enc, cb) {
      text += chunk.toString("utf8");
      cb();
    },
  });
  await exportStore(store, out, { allowLive: true });
  return text;
}

describe("workspaces on Postgres", () => {
  it("captures into Postgres under the lease and restores every snapshot exactly; gc and diff work there too", async () => {
    const store = await pgStore("ws-roundtrip");
    const d = tempDir("stead-ws-pg-");
    cleanups.push(d.remove);
    const { results, states } = await threeSteps(store, join(d.dir, "repo"));
    expect((await store.snapshots("r1")).map((s) => [s.seq, s.stepId, s.source])).toEqual([
      [0, "s0", "step"],
      [1, "s1", "step"],
      [2, "s2", "step"],
    ]);
    for (let i = 0; i < 3; i++) {
      const out = join(d.dir, `out-${i}`);
      await restoreSnapshot(store, (results[i] as Extract<CaptureResult, { ok: true }>).snapshot, out);
      expect(listTree(out)).toEqual(states[i]);
    }
    expect(await diffSnapshots(store, results[0]!.snapshot, results[2]!.snapshot)).toEqual({ added: ["step-1.txt", "step-2.txt"], changed: ["README.md"], removed: [] });
    expect(await gcWorkspaces(store, { graceMs: 0 })).toMatchObject({ blobsDeleted: 0, snapshotsDeleted: 0 });
  });

  it("export from SQLite and import into Postgres moves blobs and snapshots (verified), and the files restore from Postgres; and back", async () => {
    const lite = await openTempSqliteStore();
    cleanups.push(() => lite.cleanup());
    const d = tempDir("stead-ws-xfer-");
    cleanups.push(d.remove);
    const { results, states } = await threeSteps(lite.store, join(d.dir, "repo"));
    const dump = await dumpOf(lite.store);
    const header = JSON.parse(dump.slice(0, dump.indexOf("\n"))) as { tables: Record<string, number> };
    expect(header.tables.snapshots).toBe(3);
    expect(header.tables.blobs).toBe((await lite.store.listBlobs(null, 10_000, Number.MAX_SAFE_INTEGER)).length);
    expect(header.tables.blobs).toBeGreaterThan(5);

    const pgTarget = await pgStore("ws-xfer");
    await importStore(pgTarget, () => Readable.from([Buffer.from(dump, "utf8")]));
    const cmp = await verifyStores(lite.store, pgTarget);
    expect(cmp.differences).toEqual([]);
    expect(await pgTarget.getRun("r1")).toMatchObject({ workspace: join(d.dir, "repo") });
    const out = join(d.dir, "from-pg");
    await restoreSnapshot(pgTarget, (await pgTarget.getSnapshot("r1", { stepId: "s1" }))!, out);
    expect(listTree(out)).toEqual(states[1]);

    const back = new SqliteStore({ path: join(d.dir, "back.db") });
    cleanups.push(() => back.close());
    const pgDump = await dumpOf(pgTarget);
    await importStore(back, () => Readable.from([Buffer.from(pgDump, "utf8")]));
    expect((await verifyStores(back, lite.store)).equal).toBe(true);
    const out2 = join(d.dir, "from-back");
    await restoreSnapshot(back, results[2]!.snapshot, out2);
    expect(listTree(out2)).toEqual(states[2]);
  });
});
