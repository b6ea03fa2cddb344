/**
 * Restore hooks: run one by one by a worker before it claims a resumed run (one claimed before),
 * all-or-nothing. A hook that throws or times out leaves the run unclaimed and the store
 * unchanged, byte for byte; a passing set runs in order, is told where the run continues from
 * (last completed step, its checkpoint metadata, the workspace), and the claim's first write
 * records each hook's duration in a `run.resumed` event. A fresh run runs no hooks.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { workflow, type Stead, type Worker, type WorkerOptions } from "../src/index.js";
import { TRANSFER_TABLES, type Store, type TransferRow } from "../src/store/types.js";
import type { Checkpoint, RestoreHook } from "../src/worker/restore-gate.js";
import { FAST_FOLLOW, steadHarness, tempDir } from "./helpers/temp-store.js";
import { deferred, waitUntil } from "./helpers/waiting.js";

const h = steadHarness();
const cleanups: (() => void)[] = [];
afterEach(async () => {
  await h.cleanup();
  for (const c of cleanups.splice(0)) c();
});

function workspaceDir(): string {
  const d = tempDir("stead-ws-hooks-");
  cleanups.push(d.remove);
  const dir = join(d.dir, "repo");
  mkdirSync(dir);
  writeFileSync(join(dir, "README.md"), "# repo\n");
  return dir;
}

/** Writes a file, parks on a signal, writes another. */
const parking = workflow("ws-hooked", { version: "1" }, async (ctx, root: string) => {
  await ctx.step("prepare", { effect: true }, () => writeFileSync(join(root, "prepared.txt"), "ready\n"));
  await ctx.signal("go");
  await ctx.step("finish", { effect: true }, () => writeFileSync(join(root, "finished.txt"), "done\n"));
  return "finished";
});

/** Every row of every table a dump carries, read through the Store interface. */
async function everyRow(store: Store): Promise<Record<string, TransferRow[]>> {
  const out: Record<string, TransferRow[]> = {};
  for (const table of TRANSFER_TABLES) out[table] = await store.readRows(table, null, 1_000_000);
  return out;
}

/** A run that was claimed, parked on a signal, and was signalled: pending, fence 1, resumable. */
async function resumable(stead: Stead, options: Partial<WorkerOptions> = {}): Promise<{ id: string; dir: string }> {
  const dir = workspaceDir();
  const run = await stead.run(parking, dir, { ...FAST_FOLLOW, ...options, workspace: dir });
  expect(run.status).toBe("waiting");
  await stead.runs.signal(run.id, "go", null);
  const row = await stead.store.getRun(run.id);
  expect(row).toMatchObject({ status: "pending", fence: 1 });
  return { id: run.id, dir };
}

function hooked(stead: Stead, options: Partial<WorkerOptions>): Worker {
  return h.worker(stead, { definitions: [parking], ...options }).start();
}

/** `fn` under `name`, the name reports give a hook. */
const named = (name: string, fn: RestoreHook): RestoreHook => Object.defineProperty(fn, "name", { value: name });

const restoreErrors = () => h.errors.filter((e) => (e as { code?: string }).code === "STEAD_RESTORE_FAILED");

describe("a restore hook that fails", () => {
  it("throws: nothing is claimed or written, byte for byte, over several tries; the error names the hook; the run stays resumable", async () => {
    const stead = h.create();
    const { id } = await resumable(stead);
    const before = await everyRow(stead.store);
    let calls = 0;
    const hooks: RestoreHook[] = [
      function mountVolume() {},
      function restoreDatabase() {
        calls++;
        throw new Error("database snapshot db-7 is gone");
      },
      function neverReached() {
        throw new Error("ran after a failed hook");
      },
    ];
    const w = hooked(stead, { restoreHooks: hooks });
    await waitUntil("three failed attempts", () => calls >= 3, { timeoutMs: 20_000 });
    await w.stop();
    expect(await everyRow(stead.store)).toEqual(before);
    expect(await stead.store.getRun(id)).toMatchObject({ status: "pending", fence: 1, leaseOwner: null });

    const errors = restoreErrors();
    expect(errors.length).toBeGreaterThanOrEqual(3);
    expect(errors[0]).toMatchObject({ code: "STEAD_RESTORE_FAILED", runId: id, details: { hook: "restoreDatabase" } });
    expect((errors[0] as Error).message).toBe(`restore hook restoreDatabase failed for run ${id}: database snapshot db-7 is gone; the run was not claimed and stays resumable`);
    expect(h.errors.filter((e) => !restoreErrors().includes(e))).toEqual([]);

    // Resumable: a worker whose hooks pass takes it from where it was.
    hooked(stead, { restoreHooks: [function mountVolume() {}] });
    const run = await stead.runs.waitFor(id, { until: (r) => r.status === "completed", timeoutMs: 20_000, pollMs: 20 });
    expect(run.output).toBe("finished");
    expect((await stead.store.snapshots(id)).map((s) => s.stepId)).toEqual([null, "prepare", "finish"]);
  });

  it("times out: its signal is aborted, nothing is claimed or written, and the error says it timed out", async () => {
    const stead = h.create();
    const { id } = await resumable(stead);
    const before = await everyRow(stead.store);
    const signals: AbortSignal[] = [];
    const w = hooked(stead, {
      restoreHookTimeoutMs: 50,
      restoreHooks: [
        function waitForVolume(_cp: Checkpoint, signal: AbortSignal) {
          signals.push(signal);
          return new Promise<void>(() => undefined);
        },
      ],
    });
    await waitUntil("two timed-out attempts", () => restoreErrors().length >= 2, { timeoutMs: 20_000 });
    await w.stop();
    expect(await everyRow(stead.store)).toEqual(before);
    expect(signals.length).toBeGreaterThanOrEqual(2);
    expect(signals.every((s) => s.aborted)).toBe(true);
    expect(restoreErrors()[0]).toMatchObject({ runId: id, details: { hook: "waitForVolume" } });
    expect((restoreErrors()[0] as Error).message).toContain("restore hook waitForVolume failed for run");
    expect((restoreErrors()[0] as Error).message).toContain("timed out after 50 ms");
  });

  it("an anonymous hook is named by its place in the list", async () => {
    const stead = h.create();
    const { id } = await resumable(stead);
    const w = hooked(stead, {
      restoreHooks: [
        () => undefined,
        () => {
          throw new Error("no");
        },
      ].map((f) => named("", f)),
    });
    await waitUntil("a failure", () => restoreErrors().length >= 1);
    await w.stop();
    expect(restoreErrors()[0]).toMatchObject({ runId: id, details: { hook: "restoreHooks[1]" } });
  });

  it("does not hold up other runs: a fresh run is claimed while the failing one backs off", async () => {
    const stead = h.create();
    const { id } = await resumable(stead);
    const fresh = await stead.runs.start(parking, workspaceDir(), { workspace: workspaceDir() });
    hooked(stead, {
      concurrency: 1,
      restoreHooks: [
        function alwaysFails() {
          throw new Error("down");
        },
      ],
    });
    await stead.runs.waitFor(fresh.id, { until: (r) => r.status === "waiting", timeoutMs: 10_000, pollMs: 20 });
    expect(await stead.store.getRun(id)).toMatchObject({ status: "pending", fence: 1 });
  });
});

describe("restore hooks that pass", () => {
  it("run one by one in order before the claim, each told the last completed step, its checkpoint metadata and the workspace; run.resumed records each one's duration", async () => {
    const stead = h.create();
    let n = 0;
    const checkpointMetadata = () => ({ image: `sandbox:${++n}`, token: "t-1" });
    const { id, dir } = await resumable(stead, { checkpointMetadata });
    const journal = await stead.store.journal(id);
    const last = journal.filter((s) => s.status === "completed").sort((a, b) => b.seq - a.seq)[0];
    expect(last?.checkpoint).toBeTruthy();

    const seen: [string, Checkpoint, boolean][] = [];
    const claimedWhile: (string | null)[] = [];
    const record = (name: string) =>
      named(name, async (cp: Checkpoint, signal: AbortSignal) => {
        claimedWhile.push((await stead.store.getRun(id))?.leaseOwner ?? null);
        seen.push([name, cp, signal.aborted]);
      });
    const hooks: RestoreHook[] = [
      record("snapshotDatabase"),
      async function slowVolume(cp: Checkpoint) {
        await new Promise((r) => setTimeout(r, 40));
        seen.push(["slowVolume", cp, false]);
      },
      record("warmCache"),
    ];
    hooked(stead, { restoreHooks: hooks, checkpointMetadata });
    const run = await stead.runs.waitFor(id, { until: (r) => r.status === "completed", timeoutMs: 20_000, pollMs: 20 });
    expect(run.output).toBe("finished");

    expect(seen.map(([name]) => name)).toEqual(["snapshotDatabase", "slowVolume", "warmCache"]);
    // Before the claim: nobody held the run while the hooks ran.
    expect(claimedWhile).toEqual([null, null]);
    const expected: Checkpoint = {
      runId: id,
      definition: "ws-hooked",
      stepId: last?.stepId ?? "",
      seq: last?.seq ?? -1,
      metadata: JSON.parse(last?.checkpoint ?? "null") as Record<string, string>,
      workspace: dir,
    };
    for (const [, cp, aborted] of seen) {
      expect(cp).toEqual(expected);
      expect(aborted).toBe(false);
    }
    expect(expected.metadata).toMatchObject({ token: "[redacted]" });

    const events = await stead.runs.events({ runId: id });
    const resumed = events.filter((e) => e.type === "run.resumed");
    expect(resumed).toHaveLength(1);
    const hooksRan = resumed[0]?.data.hooks as { hook: string; ms: number }[];
    expect(hooksRan.map((x) => x.hook)).toEqual(["snapshotDatabase", "slowVolume", "warmCache"]);
    for (const x of hooksRan) expect(x.ms).toBeGreaterThanOrEqual(0);
    expect(hooksRan[1]?.ms).toBeGreaterThanOrEqual(39);
    // In the claim's first write, ahead of the workspace's own report.
    const claims = events.filter((e) => e.type === "run.claimed");
    const after = events.filter((e) => e.seq > (claims.at(-1)?.seq ?? 0)).map((e) => e.type);
    expect(after.slice(0, 2)).toEqual(["run.resumed", "workspace.restored"]);
  });

  it("also run when a crashed run (its lease expired) is taken over, with the checkpoint of its last completed step", async () => {
    const stead = h.create();
    const dir = workspaceDir();
    let first = true;
    const hang = deferred();
    const crashy = workflow("ws-hooked-crash", { version: "1" }, async (ctx, root: string) => {
      await ctx.step("prepare", { effect: true }, () => writeFileSync(join(root, "prepared.txt"), "ready\n"));
      await ctx.step("hang", async () => {
        if (first) {
          first = false;
          await hang.promise;
        }
        return "through";
      });
      return "finished";
    });
    const { id } = await stead.runs.start(crashy, dir, { workspace: dir });
    const doomed = h.worker(stead, { definitions: [crashy], leaseMs: 300 }).start();
    await waitUntil("the run to be in its hanging step", async () => (await stead.store.journal(id)).some((s) => s.stepId === "prepare" && s.status === "completed") && !first);
    doomed.abortAll();

    const seen: Checkpoint[] = [];
    h.worker(stead, { definitions: [crashy], restoreHooks: [(cp) => void seen.push(cp)] }).start();
    const run = await stead.runs.waitFor(id, { until: (r) => r.status === "completed", timeoutMs: 20_000, pollMs: 20 });
    expect(run.output).toBe("finished");
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ runId: id, stepId: "prepare", seq: 0, metadata: null, workspace: dir });
    const resumed = (await stead.runs.events({ runId: id })).filter((e) => e.type === "run.resumed");
    expect(resumed.map((e) => (e.data.hooks as { hook: string }[]).map((x) => x.hook))).toEqual([["restoreHooks[0]"]]);
    hang.resolve();
  });

  it("a fresh run (never claimed) runs no hooks and gets no run.resumed event", async () => {
    const stead = h.create();
    const dir = workspaceDir();
    const calls: string[] = [];
    const { id } = await stead.runs.start(parking, dir, { workspace: dir });
    hooked(stead, { restoreHooks: [(cp) => void calls.push(cp.runId)] });
    await stead.runs.waitFor(id, { until: (r) => r.status === "waiting", timeoutMs: 20_000, pollMs: 20 });
    expect(calls).toEqual([]);
    expect((await stead.runs.events({ runId: id })).map((e) => e.type)).not.toContain("run.resumed");
    // Its resume (after the signal) runs them.
    await stead.runs.signal(id, "go", null);
    await stead.runs.waitFor(id, { until: (r) => r.status === "completed", timeoutMs: 20_000, pollMs: 20 });
    expect(calls).toEqual([id]);
  });
});
