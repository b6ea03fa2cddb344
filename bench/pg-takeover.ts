/**
 * Takeover latency on Postgres: a worker process is SIGKILLed while it runs a long run; another
 * worker process, already running with default settings on another host name, must pick the run
 * up through the liveness lock (the killed worker's database connection closes, so its advisory
 * lock is gone at once) instead of waiting out the 30 s lease.
 *
 * Each repetition:
 *   1. the bench starts run R; worker A (STEAD_HOST=a, defaults) is spawned and claims it;
 *   2. once R has some completed steps, worker B (STEAD_HOST=b, defaults) is spawned; the kill waits
 *      until B holds its liveness lock and has been polling for a while (a random 0.3-0.8 s);
 *   3. A is SIGKILLed; the figure is the time from the kill to R's first `step.completed` written
 *      by B (the event's `at`, the database's clock, corrected by the measured offset between the
 *      bench's clock and the database's);
 *   4. R is cancelled and B is stopped (SIGTERM, graceful).
 *
 * Throughout, worker C (STEAD_HOST=c, alive the whole time) executes runs of its own. At the end,
 * every `run.claimed` whose previous status was "running" is checked against the processes the
 * bench killed: a claim of a run whose previous owner was still alive is a takeover of a live
 * worker's run, and must never happen.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { distUrl, stead as lib } from "./lib.js";

const NAME = "bench-pg-takeover";
/** Pinned so the runs created here and the child processes' definition share a fingerprint. */
const VERSION = "bench-pg-takeover-1";
/** The killed run's steps: short, so B's first step adds little to the figure; there are enough that A never finishes. */
const TAKEOVER_STEP_MS = 2;
/** The live worker's runs: slow steps, light load. */
const LIVE_STEP_MS = 50;
const LIVE_RUNS = 4;
const ENDLESS = 1_000_000;
/** Past this, the liveness path is evidently not working: the remaining repetitions are skipped. */
const GIVE_UP_MS = 10_000;
const WAIT_MS = 60_000;
const CLOCK_SLACK_MS = 10;

const takeoverRun = lib.workflow(NAME, { version: VERSION }, () => {
  throw new Error("takeover runs are executed by the worker processes, never in the bench process");
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function writeScripts(dir: string): string {
  const definition = join(dir, "takeover-definition.mjs");
  const worker = join(dir, "takeover-worker.mjs");
  writeFileSync(
    definition,
    `import { workflow } from ${JSON.stringify(distUrl)};
export const run = workflow(${JSON.stringify(NAME)}, { version: ${JSON.stringify(VERSION)} }, async (ctx, input) => {
  for (let i = 1; i <= input.steps; i++) {
    await ctx.step("s-" + i, async () => {
      await new Promise((r) => setTimeout(r, input.stepMs));
      return { step: i };
    });
  }
  return { steps: input.steps };
});
`,
  );
  // Default worker settings; only the live worker C caps its concurrency so that it never
  // competes for the killed worker's run.
  writeFileSync(
    worker,
    `import { createStead } from ${JSON.stringify(distUrl)};
import { run } from "./takeover-definition.mjs";
const stead = createStead({ store: process.argv[2] });
const concurrency = process.env.BENCH_CONCURRENCY ? Number(process.env.BENCH_CONCURRENCY) : undefined;
const worker = stead.worker({ definitions: [run], ...(concurrency ? { concurrency } : {}) });
worker.on("error", (e) => console.error(String(e)));
process.on("SIGTERM", () => void worker.stop({ graceMs: 5000 }).then(() => stead.close()).then(() => process.exit(0), () => process.exit(1)));
worker.start();
`,
  );
  return worker;
}

interface Child {
  host: string;
  child: ChildProcess;
  pid: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
  stderr: () => string;
}

function spawnWorker(script: string, url: string, host: string, extra: NodeJS.ProcessEnv = {}): Child {
  const env: NodeJS.ProcessEnv = { ...process.env, STEAD_HOST: host, ...extra };
  for (const k of ["STEAD_CRASH_AT", "STEAD_CRASH_HIT", "NODE_OPTIONS", "STEAD_DATABASE_URL", "STEAD_STORE"]) delete env[k];
  const child = spawn(process.execPath, [script, url], { env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((done, fail) => {
    child.on("error", fail);
    child.on("exit", (code, signal) => done({ code, signal, stderr }));
  });
  if (child.pid === undefined) throw new Error(`could not spawn worker ${host}`);
  return { host, child, pid: child.pid, exited, stderr: () => stderr };
}

/** SIGTERM (graceful stop), then SIGKILL if the worker is still there after `ms`. */
async function stopWorker(w: Child, ms = 10_000): Promise<void> {
  if (w.child.exitCode !== null || w.child.signalCode !== null) return;
  w.child.kill("SIGTERM");
  const timer = setTimeout(() => w.child.kill("SIGKILL"), ms);
  await w.exited;
  clearTimeout(timer);
}

async function until<T>(what: string, check: () => Promise<T | undefined>, ms = WAIT_MS, everyMs = 10): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`takeover bench: timed out after ${ms} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

export interface TakeoverResult {
  /** Kill to B's first step.completed, per repetition, ms. */
  latenciesMs: number[];
  /** Kill to the `lease.expired` event that ended A's lease, ms. */
  detectMs: number[];
  /** Kill to B's `run.claimed`, ms. */
  claimMs: number[];
  /** How each lease ended: the `lease.expired` reason, or "lease timed out". */
  paths: string[];
  /** Claims of a run whose previous owner was running when it was claimed (must be 0). */
  liveTakeovers: string[];
  /** Claims of a previously running run, in all (the legitimate ones are the takeovers measured). */
  runningClaims: number;
  /** Database clock minus this process's clock, ms (applied to every figure). */
  clockOffsetMs: number;
  skipped: string | undefined;
}

export async function takeoverLatency(url: string, dir: string, repeats: number): Promise<TakeoverResult> {
  const script = writeScripts(dir);
  const stead = lib.createStead({ store: url });
  const probe = new pg.Client({ connectionString: url, application_name: "stead-bench-probe" });
  probe.on("error", () => undefined);
  const children: Child[] = [];
  const killed = new Map<number, number>();
  const result: TakeoverResult = { latenciesMs: [], detectMs: [], claimMs: [], paths: [], liveTakeovers: [], runningClaims: 0, clockOffsetMs: 0, skipped: undefined };
  try {
    await stead.ready();
    await probe.connect();
    result.clockOffsetMs = await clockOffset(probe);
    const livenessLocks = async () =>
      Number(
        (
          await probe.query<{ n: string }>(
            "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
          )
        ).rows[0]?.n,
      );

    // The live worker and its runs, running for the whole measurement.
    const live: string[] = [];
    for (let i = 0; i < LIVE_RUNS; i++) live.push((await stead.runs.start(takeoverRun, { steps: ENDLESS, stepMs: LIVE_STEP_MS })).id);
    const c = spawnWorker(script, url, "c", { BENCH_CONCURRENCY: String(LIVE_RUNS) });
    children.push(c);
    for (const id of live) await until(`live run ${id} to run on worker c`, async () => ((await stead.runs.get(id)).lease?.host === "c" ? true : undefined));

    for (let r = 0; r < repeats; r++) {
      const { id } = await stead.runs.start(takeoverRun, { steps: ENDLESS, stepMs: TAKEOVER_STEP_MS });
      const a = spawnWorker(script, url, "a");
      children.push(a);
      await until(`run ${id} to run on worker a with 20 steps done`, async () => {
        const run = await stead.runs.get(id);
        if (run.lease?.host !== "a") return undefined;
        return (await stead.store.journal(id)).length >= 20 ? true : undefined;
      });

      const before = await livenessLocks();
      const b = spawnWorker(script, url, "b");
      children.push(b);
      await until("worker b to hold its liveness lock", async () => ((await livenessLocks()) > before ? true : undefined));
      await sleep(300 + Math.random() * 500);

      const lastSeq = (await stead.runs.events({ runId: id, limit: 100_000 })).at(-1)?.seq ?? 0;
      const killedAt = Date.now() + result.clockOffsetMs;
      a.child.kill("SIGKILL");
      killed.set(a.pid, killedAt);
      await a.exited;

      const after = await until(
        `worker b's first step of run ${id} after the kill`,
        async () => {
          const evs = await stead.runs.events({ runId: id, afterSeq: lastSeq });
          const claim = evs.find((e) => e.type === "run.claimed" && e.data.host === "b");
          const step = claim && evs.find((e) => e.type === "step.completed" && e.seq > claim.seq);
          return claim && step ? { evs, claim, step } : undefined;
        },
        WAIT_MS,
        5,
      );
      const expired = after.evs.find((e) => e.type === "lease.expired" && e.seq < after.claim.seq);
      result.latenciesMs.push(after.step.at - killedAt);
      result.claimMs.push(after.claim.at - killedAt);
      if (expired) result.detectMs.push(expired.at - killedAt);
      result.paths.push(expired ? String(expired.data.reason) : "lease timed out");

      await stead.runs.cancel(id, { reason: "takeover bench repetition done" });
      await stopWorker(b);
      if (after.step.at - killedAt > GIVE_UP_MS) {
        result.skipped = `stopped after repetition ${r + 1}: takeover took over ${GIVE_UP_MS / 1000} s`;
        break;
      }
    }

    // Every claim of a run that was running: its previous owner must be a process the bench killed.
    const events = await stead.runs.events({ limit: 1_000_000 });
    const lastClaim = new Map<string, { pid: number; host: string }>();
    for (const e of events) {
      if (e.type !== "run.claimed") continue;
      const prev = lastClaim.get(e.runId);
      if (e.data.previousStatus === "running") {
        result.runningClaims += 1;
        const killedAt = prev ? killed.get(prev.pid) : undefined;
        // The kill time is this process's clock moved onto the database's by a measured offset:
        // allow that estimate a few ms of error before calling a claim earlier than the kill.
        if (!prev || killedAt === undefined || killedAt > e.at + CLOCK_SLACK_MS) {
          result.liveTakeovers.push(`run ${e.runId} claimed by ${String(e.data.host)}:${String(e.data.pid)} from ${prev ? `${prev.host}:${prev.pid}` : "an unknown owner"}, alive at the time`);
        }
      }
      lastClaim.set(e.runId, { pid: Number(e.data.pid), host: String(e.data.host) });
    }
    for (const id of live) {
      const run = await stead.runs.get(id);
      if (run.status !== "running" || run.lease?.host !== "c") result.liveTakeovers.push(`live run ${id} is ${run.status} on ${run.lease?.host ?? "no host"}, not running on worker c`);
      await stead.runs.cancel(id, { reason: "takeover bench done" });
    }
    return result;
  } catch (e) {
    const said = children.filter((w) => w.stderr().trim()).map((w) => `worker ${w.host} (pid ${w.pid}) stderr:\n${w.stderr().trim()}`);
    if (said.length === 0) throw e;
    throw new Error(`${e instanceof Error ? e.message : String(e)}\n${said.join("\n")}`, { cause: e });
  } finally {
    for (const w of children) await stopWorker(w, 5_000).catch(() => undefined);
    await probe.end().catch(() => undefined);
    await stead.close();
  }
}

/** The database's clock minus ours, from the middle of a round trip (the smallest of a few). */
async function clockOffset(c: pg.Client): Promise<number> {
  let best = { rtt: Infinity, offset: 0 };
  for (let i = 0; i < 5; i++) {
    const t0 = Date.now();
    const db = Number((await c.query<{ ms: string }>("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms")).rows[0]?.ms);
    const t1 = Date.now();
    if (t1 - t0 < best.rtt) best = { rtt: t1 - t0, offset: db - (t0 + t1) / 2 };
  }
  return Math.round(best.offset);
}
