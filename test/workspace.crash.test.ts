/**
 * Workspace durability across real crashes: an agent (scripted model) edits its run's workspace
 * over several tool steps in a worker process (test/fixtures/crash/worker.mjs running
 * test/fixtures/workspace-crash/agents.mjs from dist/); the process dies by SIGKILL in the middle
 * of a step; a fresh worker process finishes the run. Whatever the resume found on disk (nothing
 * at all, as on another machine, or a half-done change), the run ends with exactly the files
 * (paths, contents, modes, directories) a crash-free run of the same script produced.
 *
 * Needs a fresh dist/ (`npm test` builds first; alone, run `npm run build`).
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { EventView, RunInfo, Stead } from "../src/index.js";
import { SETTLED, useSandbox, type Sandbox, type WorkerProcess } from "./fixtures/crash/harness.js";
import { listTree, writeTree, type Listing, type Spec } from "./helpers/workspace.js";

const AGENTS = fileURLToPath(new URL("./fixtures/workspace-crash/agents.mjs", import.meta.url));
const DIST_WORKSPACE = fileURLToPath(new URL("../dist/engine/runs/workspace.js", import.meta.url));
const AGENT = "ws-editor";
const PROMPT = "edit the workspace";

/** What every workspace holds before its run starts. */
const SEED: Spec = {
  "README.md": "# demo\n",
  "old/legacy.txt": "legacy\n",
  "src/app.js": "export const version = 0;\n",
};

/** Tool steps of the script (see agents.mjs): turn k's i-th call is `tool:call_<k>_<i>`. */
const GENERATE = "tool:call_2_0";
const REWRITE = "tool:call_3_0";

let box: Sandbox;
let stead: Stead;
useSandbox((b, s) => {
  box = b;
  stead = s;
});

beforeAll(() => {
  if (!existsSync(DIST_WORKSPACE)) throw new Error("dist/ has no workspace wiring: run `npm run build` before these tests (`npm test` does)");
});

function workspace(name: string): string {
  const dir = join(box.dir, name);
  mkdirSync(dir);
  writeTree(dir, SEED);
  return dir;
}

function spawnWorker(options: { start?: { id: string; workspace: string }; slowMs?: number; crashAt?: string; cwd?: string } = {}): WorkerProcess {
  return box.spawn(
    { workflows: AGENTS, leaseMs: 5000, pollMs: 20, ...(options.start ? { start: [{ id: options.start.id, workflow: AGENT, input: PROMPT, workspace: options.start.workspace }] } : {}) },
    {
      ...(options.slowMs !== undefined ? { slowMs: options.slowMs } : {}),
      ...(options.crashAt !== undefined ? { crashAt: options.crashAt } : {}),
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    },
  );
}

async function completed(id: string): Promise<RunInfo> {
  const run = await stead.runs.waitFor(id, { until: (r) => SETTLED.includes(r.status), timeoutMs: 30_000, pollMs: 20 });
  expect(run.status, `run ${id}: ${JSON.stringify(run.error)}`).toBe("completed");
  return run;
}

/** A crash-free run of the script in its own directory: its files and its output. */
async function reference(): Promise<{ files: Listing; output: unknown }> {
  const dir = workspace("ws-reference");
  const w = spawnWorker({ start: { id: "reference", workspace: dir } });
  await w.started(30_000);
  const run = await completed("reference");
  await w.terminate();
  return { files: listTree(dir), output: run.output };
}

/** Another directory to run the resuming worker in: the workspace path it uses is the run's, absolute. */
function elsewhere(): string {
  const dir = join(box.dir, "elsewhere");
  mkdirSync(dir, { recursive: true });
  return dir;
}

const events = async (id: string, type: string): Promise<EventView[]> => (await stead.runs.events({ runId: id })).filter((e) => e.type === type);

async function toolOutput(id: string, stepId: string): Promise<unknown> {
  const step = (await stead.runs.journal(id)).find((s) => s.id === stepId);
  return step?.output;
}

async function lastCompletedTool(id: string): Promise<{ id: string; seq: number }> {
  const steps = (await stead.runs.journal(id)).filter((s) => s.kind === "tool" && s.status === "completed");
  const last = steps.at(-1);
  if (!last) throw new Error(`run ${id} has no completed tool step`);
  return { id: last.id, seq: last.seq };
}

describe("an agent killed mid-step, its workspace gone, resumed in another directory", () => {
  it("restores the last completed step's files into the missing directory and finishes with exactly the crash-free run's files", async () => {
    const ref = await reference();
    expect(Object.keys(ref.files)).toEqual(["README.md", "bin", "bin/run.sh", "docs", "docs/notes.md", "gen", "gen/file-1.txt", "gen/file-3.txt", "old", "src", "src/app.js", "src/config.json"]);
    expect(ref.files["bin/run.sh"]).toBe("file 755 #!/bin/sh\nnode src/app.js\n");
    expect(ref.files["docs/notes.md"]).toBe("file 600 # Notes\n");

    const dir = workspace("ws-crash");
    const first = spawnWorker({ start: { id: "crash", workspace: dir }, slowMs: 60_000 });
    await box.waitForEffect((l) => l.runId === "crash" && l.stepId === GENERATE && l.phase === "start", "generate to be under way", 30_000);
    expect((await first.kill()).signal).toBe("SIGKILL");
    const before = await lastCompletedTool("crash");
    expect(before.id).toBe("tool:call_1_1");
    expect(readFileSync(join(dir, "gen", "file-1.txt"), "utf8")).toBe("fixture 1\n");

    // As if on another machine: the directory is gone.
    rmSync(dir, { recursive: true, force: true });
    const second = spawnWorker({ cwd: elsewhere() });
    const run = await completed("crash");
    await second.terminate();

    expect(listTree(dir)).toEqual(ref.files);
    expect(run.output).toEqual(ref.output);
    const [restored, ...more] = await events("crash", "workspace.restored");
    expect(more).toEqual([]);
    expect(restored?.data).toMatchObject({ action: "restored", workspace: dir, step: before.id, seq: before.seq });
    // generate ran again, in the second process, against the restored files.
    const starts = box.effects().filter((l) => l.runId === "crash" && l.stepId === GENERATE && l.phase === "start");
    expect(starts.map((l) => l.pid)).toEqual([first.pid, second.pid]);
  });

  it.each([
    ["after-intent", "tool:call_0_1"],
    ["after-effect", REWRITE],
    ["mid-group-commit", "tool:call_1_0"],
    ["after-commit", GENERATE],
  ])("killed at %s of %s: the same files", async (point, stepId) => {
    const ref = await reference();
    const dir = workspace("ws-crash");
    const first = spawnWorker({ start: { id: "crash", workspace: dir }, crashAt: `${point}:${stepId}` });
    const exit = await first.died(30_000);
    expect(exit.signal, `worker stderr: ${first.stderr}`).toBe("SIGKILL");
    const step = (await stead.runs.journal("crash")).find((s) => s.id === stepId);
    // Killed before the step's outcome was committed, except at after-commit.
    expect(step?.status).toBe(point === "after-commit" ? "completed" : point === "mid-group-commit" ? undefined : "intent");

    rmSync(dir, { recursive: true, force: true });
    const second = spawnWorker({ cwd: elsewhere() });
    const run = await completed("crash");
    await second.terminate();

    expect(listTree(dir)).toEqual(ref.files);
    expect(run.output).toEqual(ref.output);
    expect((await events("crash", "workspace.restored")).map((e) => e.data.action)).toEqual(["restored"]);
  });
});

describe("an agent killed with a change half done, resumed on the same machine", () => {
  // Read by agents.mjs in the workers spawned here (Sandbox.spawn passes this process's env).
  beforeEach(() => {
    process.env.STEAD_TEST_SLOW_TOOL = "rewrite";
  });
  afterEach(() => {
    delete process.env.STEAD_TEST_SLOW_TOOL;
  });

  it("puts the half-done file back as it was after the last completed step before the step runs again", async () => {
    const ref = await reference();
    const dir = workspace("ws-crash");
    const first = spawnWorker({ start: { id: "crash", workspace: dir }, slowMs: 60_000 });
    await box.waitForEffect((l) => l.runId === "crash" && l.stepId === REWRITE && l.phase === "start", "rewrite to be under way", 30_000);
    expect((await first.kill()).signal).toBe("SIGKILL");
    // Half done: the first file rewritten, the second not written.
    expect(readFileSync(join(dir, "src", "app.js"), "utf8")).toBe("export const version = 2;\n");
    expect(existsSync(join(dir, "src", "config.json"))).toBe(false);
    const before = await lastCompletedTool("crash");
    expect(before.id).toBe(GENERATE);

    const second = spawnWorker({ cwd: elsewhere() });
    const run = await completed("crash");
    await second.terminate();

    const [restored, ...more] = await events("crash", "workspace.restored");
    expect(more).toEqual([]);
    expect(restored?.data).toMatchObject({ action: "put-back", step: GENERATE, seq: before.seq, changed: ["src/app.js"], added: [], removed: [] });
    // The re-run found version 1, as the crash-free run did: not the half-done version 2.
    const out = await toolOutput("crash", REWRITE);
    expect(out).toBe('rewrote src/app.js (was "export const version = 1;\\n") and src/config.json');
    expect(out).toEqual(await toolOutput("reference", REWRITE));
    expect(listTree(dir)).toEqual(ref.files);
    expect(run.output).toEqual(ref.output);
  });
});

describe("a worker frozen right after it claimed a resumed run, on the same machine", () => {
  it("does not restore the workspace once another worker has finished the run in it", async () => {
    const ref = await reference();
    const dir = workspace("ws-frozen");
    const first = spawnWorker({ start: { id: "frozen", workspace: dir }, crashAt: `after-commit:${GENERATE}` });
    expect((await first.died(30_000)).signal).toBe("SIGKILL");
    const zombie = box.spawn({ workflows: AGENTS, leaseMs: 1000, pollMs: 20 }, { crashAt: "after-claim", crashSignal: "SIGSTOP" });
    await zombie.stopped(30_000);

    // Alive and on this host, the frozen owner is no dead owner: the taker waits out its lease.
    const taker = box.spawn({ workflows: AGENTS, leaseMs: 1000, pollMs: 20 });
    const run = await completed("frozen");
    expect(listTree(dir)).toEqual(ref.files);

    zombie.child.kill("SIGCONT");
    const outcome = await zombie.waitFor((r) => r.type === "outcome" && r.runId === "frozen", "the frozen worker's outcome once continued", 15_000);
    expect(outcome).toMatchObject({ outcome: { kind: "lease-lost" } });
    expect(await zombie.terminate()).toEqual({ code: 0, signal: null });
    expect(await taker.terminate()).toEqual({ code: 0, signal: null });
    // Put back to the last step the zombie knew of, the files would lose what the taker's steps wrote.
    expect(listTree(dir)).toEqual(ref.files);
    expect(run.output).toEqual(ref.output);
  });
});
