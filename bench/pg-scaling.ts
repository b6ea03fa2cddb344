/**
 * Scaling with workers on Postgres: 1, 2 and 4 worker processes (each a plain script on the built
 * library, concurrency 50, default settings otherwise) share 500 runs of 100 ~1 KB steps on a
 * fresh database each time. Throughput is steps over the span between the first and the last
 * `step.completed` (the database's clock), so process start-up is not in it.
 *
 * Beside each figure, where the CPU went over the same span of wall time: the worker processes'
 * own (read from /proc when they are done), the Postgres server's processes (every process named
 * `postgres` on this machine, with the CPU of backends that exited in between, which the postmaster
 * collects), and the whole machine's busy share of its cores (/proc/stat). An external server on
 * another host shows no server CPU here; the machine's share still tells whether the cores ran out.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { distUrl, stead as lib } from "./lib.js";

const NAME = "bench-pg-scaling";
/** Pinned so the runs started here and the worker processes' definition share a fingerprint. */
const VERSION = "bench-pg-scaling-1";
const DONE_WITHIN_MS = 300_000;
/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on every Linux the bench runs on). */
const TICKS = 100;

const scalingRun = lib.workflow(NAME, { version: VERSION }, () => {
  throw new Error("scaling runs are executed by the worker processes, never in the bench process");
});

export interface ScalingPoint {
  workers: number;
  stepsPerSec: number;
  /** CPU over the run's wall time, in cores: the worker processes, the Postgres server, the machine. */
  workerCores: number;
  serverCores: number | undefined;
  machineBusy: number;
  cores: number;
  /** Transactions the database committed per second of wall time (pg_stat_database), the workers' and the bench's polls. */
  commitsPerSec: number;
}

function writeScripts(dir: string): string {
  const definition = join(dir, "scaling-definition.mjs");
  const worker = join(dir, "scaling-worker.mjs");
  writeFileSync(
    definition,
    `import { workflow } from ${JSON.stringify(distUrl)};
const result = (i) => {
  const head = { step: i, title: "result of step " + i, tags: ["bench", "kb", "n" + (i % 7)], body: "" };
  head.body = "lorem ipsum dolor sit amet ".repeat(40).slice(0, 1024 - JSON.stringify(head).length);
  return head;
};
export const run = workflow(${JSON.stringify(NAME)}, { version: ${JSON.stringify(VERSION)} }, async (ctx, input) => {
  for (let i = 0; i < input.steps; i++) await ctx.step("s-" + i, () => result(i));
  return { steps: input.steps };
});
`,
  );
  writeFileSync(
    worker,
    `import { createStead } from ${JSON.stringify(distUrl)};
import { run } from "./scaling-definition.mjs";
const stead = createStead({ store: process.argv[2] });
const worker = stead.worker({ definitions: [run], concurrency: Number(process.argv[3]) });
worker.on("error", (e) => console.error(String(e)));
process.on("SIGTERM", () => void worker.stop({ graceMs: 5000 }).then(() => stead.close()).then(() => process.exit(0), () => process.exit(1)));
worker.start();
`,
  );
  return worker;
}

/** utime + stime (+ reaped children's, for the postmaster) of a process, in ticks; undefined once it is gone. */
function processTicks(pid: number, children: boolean): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name is in parentheses and may hold spaces: fields are counted after it.
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ").map(Number);
    return (f[11] ?? 0) + (f[12] ?? 0) + (children ? (f[13] ?? 0) + (f[14] ?? 0) : 0);
  } catch {
    return undefined;
  }
}

/** CPU ticks of every `postgres` process on this machine; undefined when there is none (an external server elsewhere). */
function postgresTicks(): number | undefined {
  let total: number | undefined;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let comm: string;
    try {
      comm = readFileSync(`/proc/${entry}/comm`, "utf8").trim();
    } catch {
      continue;
    }
    if (comm !== "postgres") continue;
    total = (total ?? 0) + (processTicks(Number(entry), true) ?? 0);
  }
  return total;
}

/** Busy and total ticks of the whole machine. */
function machineTicks(): { busy: number; total: number } {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
  const t = line.trim().split(/\s+/).slice(1).map(Number);
  const total = t.reduce((a, b) => a + b, 0);
  const idle = (t[3] ?? 0) + (t[4] ?? 0);
  return { busy: total - idle, total };
}

function spawnWorker(script: string, url: string, concurrency: number): { child: ChildProcess; exited: Promise<void>; stderr: () => string } {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, [script, url, String(concurrency)], { env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  return { child, exited, stderr: () => stderr };
}

/** One point of the curve on a fresh database: `workers` processes of concurrency `concurrency` share `runs` runs of `steps` steps. */
export async function scalingPoint(url: string, dir: string, workers: number, runs: number, steps: number, concurrency: number): Promise<ScalingPoint> {
  const script = writeScripts(dir);
  const stead = lib.createStead({ store: url });
  const procs: ReturnType<typeof spawnWorker>[] = [];
  try {
    for (let r = 0; r < runs; r++) await stead.runs.start(scalingRun, { steps });
    const commits0 = await committed(url);
    const server0 = postgresTicks();
    const machine0 = machineTicks();
    const t0 = performance.now();
    for (let w = 0; w < workers; w++) procs.push(spawnWorker(script, url, concurrency));
    const deadline = Date.now() + DONE_WITHIN_MS;
    for (;;) {
      const done = await stead.runs.count({ status: ["completed"] });
      if (done === runs) break;
      const failed = await stead.runs.count({ status: ["failed", "cancelled"] });
      if (failed > 0) throw new Error(`${failed} scaling runs ended without completing; worker stderr: ${procs.map((p) => p.stderr()).join(" | ")}`);
      if (Date.now() > deadline) throw new Error(`${workers} workers completed ${done} of ${runs} runs in ${DONE_WITHIN_MS / 1000} s; worker stderr: ${procs.map((p) => p.stderr()).join(" | ")}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const wallS = (performance.now() - t0) / 1000;
    const workerTicks = procs.reduce((sum, p) => sum + (processTicks(p.child.pid ?? -1, false) ?? 0), 0);
    const server1 = postgresTicks();
    const machine1 = machineTicks();
    const span = await spanOfSteps(url);
    if (span.steps !== runs * steps) throw new Error(`${span.steps} steps completed, expected ${runs * steps}`);
    // A backend reports its commits when it exits at the latest: counted once the workers are gone.
    await stopAll(procs);
    const commitsPerSec = ((await committed(url)) - commits0) / wallS;
    const cores = availableParallelism();
    return {
      commitsPerSec,
      workers,
      stepsPerSec: (span.steps * 1000) / span.ms,
      workerCores: workerTicks / TICKS / wallS,
      serverCores: server0 === undefined || server1 === undefined ? undefined : (server1 - server0) / TICKS / wallS,
      machineBusy: (machine1.busy - machine0.busy) / Math.max(1, machine1.total - machine0.total),
      cores,
    };
  } finally {
    await stopAll(procs);
    await stead.close();
  }
}

async function stopAll(procs: readonly ReturnType<typeof spawnWorker>[]): Promise<void> {
  for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGTERM");
  await Promise.all(procs.map((p) => p.exited));
}

async function withPg<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url, application_name: "stead-bench-scaling" });
  c.on("error", () => undefined);
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Transactions committed in this database so far, as the server's statistics have them. */
function committed(url: string): Promise<number> {
  return withPg(url, async (c) => {
    await c.query("SELECT pg_stat_clear_snapshot()");
    return Number((await c.query<{ n: string }>("SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()")).rows[0]?.n);
  });
}

/** The first and last step commits by the database's clock, and how many there were. */
function spanOfSteps(url: string): Promise<{ ms: number; steps: number }> {
  return withPg(url, async (c) => {
    const row = (await c.query<{ first: string; last: string; n: string }>("SELECT min(at) AS first, max(at) AS last, count(*) AS n FROM events WHERE type = 'step.completed'")).rows[0];
    return { ms: Math.max(1, Number(row?.last) - Number(row?.first)), steps: Number(row?.n) };
  });
}
