/**
 * A store that cannot write for lack of space is a `storage` hold, not a crash: the runs whose
 * writes failed are handed back at once (held `storage`, their leases released, never a lost
 * claim), claims pause, `ps` and `why` say "storage full since …", a `storage.full` event follows
 * once it lasts, a person's release is refused while the store is still full, and when space
 * returns every run continues by itself, with no completed step run again.
 *
 * Real full stores: an SQLite file at its size limit (`maxSizeBytes`, SQLite's page limit) whose
 * space returns when rows are deleted; and, as root, an SQLite file on a small tmpfs and a
 * Postgres server whose data directory is on one, each filled to the last byte, whose space
 * returns when the filler file is deleted.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { createStead, SqliteStore, workflow, type RunInfo, type Stead } from "../src/index.js";
import { tempStorePath } from "./helpers/temp-store.js";
import { waitUntil } from "./helpers/waiting.js";
import { cli, requireBuild } from "./cli-helpers.js";
import { Sandbox, useSandbox, type WorkerConfig, type WorkerProcess } from "./fixtures/crash/harness.js";
import { readLog, restartedAfterCommit } from "./fixtures/pg/checks.js";
import { PRIVATE_SERVER_UNAVAILABLE } from "./setup/postgres.js";
import { fillToTheLastByte, ROOT, withPostgresOnTmpfs } from "./helpers/full-disk.js";

const WORKFLOWS = fileURLToPath(new URL("./fixtures/pg/workflows.mjs", import.meta.url));
const IDS = ["r1", "r2"];
const INPUT = { steps: 30, delayMs: 5, padBytes: 20_000, logStarts: true };
/** The worker's storage settings: a small headroom and a quick alert, so the test runs in seconds. */
const STORAGE = { storageHeadroomBytes: 256 * 1024, storageAlertMs: 1500, storageProbeMs: 100 };

const ballast = workflow("ballast", { version: "1" }, () => null);

const heldStorage = (r: RunInfo) => r.status === "held";

/** What every full-store case checks once the store is full, then once space has returned. */
async function whileFull(stead: Stead, worker: WorkerProcess, storePath: string, dir: string, releaseRefused: boolean): Promise<void> {
  await worker.waitFor((r) => r.type === "storage" && r.report.state === "full", "the worker to find the store full", 60_000);
  // Told once, not at every probe.
  await worker.waitFor((r) => r.type === "storage" && r.report.state === "still-full", "the worker to say the store stays full", 10_000);
  // Handed back at once: held `storage`, no lease, not left running until a lease expires.
  for (const id of IDS) {
    const run = await stead.runs.waitFor(id, { until: (r) => heldStorage(r) || r.status === "completed", timeoutMs: 5000, pollMs: 50 });
    expect(run.status, id).toBe("held");
    expect(run.lease, id).toBeNull();
    expect(run.lostClaims, id).toBe(0);
    expect((await stead.holds.list({ runId: id })).map((h) => h.kind), id).toEqual(["storage"]);
  }
  const why = await cli(["why", "r1", "--store", storePath], dir);
  expect(why.stdout).toMatch(/storage full since \d{4}-\d\d-\d\dT/);
  expect(why.stdout).toContain("continues by itself");
  const ps = await cli(["ps", "--store", storePath], dir);
  expect(ps.stdout).toMatch(/r1\s.*held\s+storage full since/);
  if (releaseRefused) {
    const release = await cli(["release", "r1", "storage", "--choice", "retry", "--store", storePath], dir);
    expect(release.code, release.stderr).toBe(2);
    expect(release.stderr).toContain("still cannot");
    expect((await stead.runs.get("r1")).status).toBe("held");
  }
  // A person is told once it lasts: a storage.full event for each run.
  for (const id of IDS) {
    await poll(async () => ((await stead.runs.events({ runId: id })).some((e) => e.type === "storage.full") ? true : undefined), `a storage.full event of ${id}`, 10_000);
  }
}

async function afterSpaceReturns(stead: Stead, worker: WorkerProcess, log: string): Promise<void> {
  for (const id of IDS) {
    const run = await stead.runs.waitFor(id, { until: (r) => r.status === "completed", timeoutMs: 60_000, pollMs: 50 });
    expect((run.output as { n: string[] }).n, id).toHaveLength(INPUT.steps);
    expect(run.lostClaims, id).toBe(0);
    const events = await stead.runs.events({ runId: id });
    expect(events.filter((e) => e.type === "run.held").map((e) => e.data.hold), id).toEqual(["storage"]);
    expect(events.find((e) => e.type === "hold.released")?.data, id).toMatchObject({ hold: "storage", by: "stead" });
    expect(events.some((e) => e.type === "storage.recovered"), id).toBe(true);
    // Claimed again from pending: a full store is never counted as a lost claim.
    const claims = events.filter((e) => e.type === "run.claimed");
    expect(claims.slice(1).map((e) => e.data.previousStatus), id).not.toContain("running");
  }
  await worker.waitFor((r) => r.type === "storage" && r.report.state === "recovered", "the worker to report the store writable again");
  expect(worker.reports.filter((r) => r.type === "storage").map((r) => (r.type === "storage" ? r.report.state : ""))).toEqual(["full", "still-full", "recovered"]);
  expect(await restartedAfterCommit(stead, IDS, readLog(log))).toEqual([]);
  expect(await worker.terminate()).toEqual({ code: 0, signal: null });
}

async function poll<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const config = (extra: WorkerConfig): WorkerConfig => ({ workflows: WORKFLOWS, pollMs: 20, leaseMs: 3000, worker: STORAGE, ...extra });

describe("an SQLite store at its size limit", () => {
  let box: Sandbox;
  let stead: Stead;
  useSandbox((b, s) => {
    box = b;
    stead = s;
  });

  it("holds its runs `storage` at once, pauses claims, and lets every run finish by itself when rows are deleted", async () => {
    requireBuild();
    // Ballast another process deletes later: space returning the way `stead gc` would return it.
    for (const id of ["ballast-1", "ballast-2", "ballast-3"]) await stead.runs.start(ballast, "x".repeat(900_000), { id });
    const probe = new Database(box.store, { readonly: true });
    const size = Number(probe.pragma("page_count", { simple: true })) * Number(probe.pragma("page_size", { simple: true }));
    probe.close();
    const worker = box.spawn(config({ sqlite: { maxSizeBytes: size + 500_000, reserveBytes: 64 * 1024 }, start: IDS.map((id) => ({ id, workflow: "many", input: INPUT })) }));
    await whileFull(stead, worker, box.store, box.dir, false);

    const db = new Database(box.store);
    db.prepare("DELETE FROM runs WHERE definition = 'ballast'").run();
    db.close();
    await afterSpaceReturns(stead, worker, box.log);
  }, 120_000);
});

describe.skipIf(!ROOT)("an SQLite store on a full file system (a tmpfs; needs root to mount)", () => {
  let mount: string | undefined;
  afterEach(() => {
    if (mount) execFileSync("umount", ["-l", mount]);
    mount = undefined;
  });

  it("holds its runs `storage` at once, refuses a manual release while full, and lets every run finish when space returns", async () => {
    requireBuild();
    const box = new Sandbox();
    mount = join(box.dir, "fs");
    mkdirSync(mount);
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=12m", "tmpfs", mount]);
    const storePath = join(mount, "stead.db");
    const stead = createStead({ store: storePath });
    await stead.ready();
    const worker = box.spawn({ ...config({ start: IDS.map((id) => ({ id, workflow: "many", input: INPUT })) }), store: storePath });
    try {
      await box.waitForEffect((l) => l.stepId === "s03" && l.phase === "done", "the runs to be under way", 20_000);
      // Fill the file system to its last byte.
      const filler = join(mount, "filler");
      fillToTheLastByte(filler);
      await whileFull(stead, worker, storePath, box.dir, true);
      rmSync(filler);
      await afterSpaceReturns(stead, worker, box.log);
    } finally {
      await box.killAll();
      await stead.close();
      if (mount) execFileSync("umount", ["-l", mount]);
      mount = undefined;
      box.remove();
    }
  }, 120_000);
});

describe.skipIf(!ROOT || PRIVATE_SERVER_UNAVAILABLE !== undefined)("a Postgres store whose data disk is full (a tmpfs; needs root to mount)", () => {
  it("holds its runs `storage` at once, refuses a manual release while full, and lets every run finish when space returns", async () => {
    requireBuild();
    const box = new Sandbox();
    await withPostgresOnTmpfs(box, "full", async ({ url, stead, mount }) => {
      const worker = box.spawn({ ...config({ start: IDS.map((id) => ({ id, workflow: "many", input: INPUT })) }), store: url });
      await box.waitForEffect((l) => l.stepId === "s03" && l.phase === "done", "the runs to be under way", 30_000);
      const filler = join(mount, "filler");
      fillToTheLastByte(filler);
      await whileFull(stead, worker, url, box.dir, true);
      rmSync(filler);
      await afterSpaceReturns(stead, worker, box.log);
    });
  }, 180_000);
});

describe("a worker that finds another worker's storage holds and no room", () => {
  it("stops its own runs at their next step and holds them too; every run continues once room returns", async () => {
    const t = tempStorePath();
    const real = new SqliteStore({ path: t.path });
    // Another machine's disk is full: this store's probe finds no room until the test says so.
    let room = false;
    const store = new Proxy(real, {
      get(target, prop, receiver) {
        if (prop === "checkStorage") return (n: number) => Promise.resolve({ ok: room, freeBytes: room ? n : 0, detail: room ? "room" : "no room (as another worker found)" });
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const stead = createStead({ store });
    try {
      const steps = workflow("stepper", { version: "1" }, async (ctx) => {
        for (let i = 0; i < 40; i++) await ctx.step(`s${i}`, () => new Promise((r) => setTimeout(() => r(i), 20)));
        return "done";
      });
      const { id: mine } = await stead.runs.start(steps, null);
      const { id: theirs } = await stead.runs.start(steps, null, { id: "theirs" });
      await stead.store.commit([[{ runId: theirs, run: { status: "held" } }]]);
      const reports: string[] = [];
      const w = stead.worker({ definitions: [steps], pollMs: 20, storageProbeMs: 50, runIds: [mine] });
      w.on("storage", (r) => reports.push(r.state));
      w.start();
      await waitUntil("the run to be under way", async () => (await stead.runs.journal(mine)).length >= 3);
      // The other worker's run, held storage as that worker would hold it after its disk filled.
      await stead.store.commit([[{ runId: theirs, holds: [{ kind: "storage", reason: "the store could not write", details: JSON.stringify({ since: Date.now(), error: "disk full" }) }] }]]);
      const held = await stead.runs.waitFor(mine, { until: (r) => r.status === "held", timeoutMs: 10_000, pollMs: 20 });
      expect(held.lease).toBeNull();
      expect((await stead.holds.list({ runId: mine })).map((h) => h.kind)).toEqual(["storage"]);
      room = true;
      w.setRunIds([mine, theirs]);
      for (const id of [mine, theirs]) expect((await stead.runs.waitFor(id, { timeoutMs: 20_000 })).status).toBe("completed");
      expect(reports).toContain("recovered");
      expect((await stead.runs.get(mine)).lostClaims).toBe(0);
    } finally {
      await stead.close();
      t.remove();
    }
  }, 60_000);
});
