/**
 * Chaos on Postgres: three worker processes, each on its own host (STEAD_HOST), share one
 * database and 300 runs of 20 steps, a fifth of them effects. A seeded chaos loop SIGKILLs a
 * random worker every 1-3 s and restarts it (same host, new process) for 20 s, then the workers
 * finish; every fourth action instead freezes the worker past its lease (SIGSTOP, SIGCONT), so
 * takeover by lease expiry and zombie writes play too. Every run completes; the fsynced side-effect log shows no completed step ran twice
 * unless its first execution was killed before it could commit, and no effect was silently
 * repeated: interrupted effects are reconciled from the log, or held (the step without reconcile)
 * and released by the test according to the log.
 *
 * STEAD_CHAOS_SEED=<n> replays a seed (printed in every failure).
 */
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { type Stead } from "../src/index.js";
import { Sandbox, useSandbox, type WorkerConfig, type WorkerProcess } from "./fixtures/crash/harness.js";
import { checkRuns, completeAll, gather, readLog } from "./fixtures/pg/checks.js";
import { seeded } from "./helpers/seeded.js";

const WORKFLOWS = fileURLToPath(new URL("./fixtures/pg/workflows.mjs", import.meta.url));
const RUNS = 300;
const STEPS = 20;
const EFFECT_EVERY = 4;
/** The effect step without reconcile: interrupted between intent and outcome, its run is held. */
const UNRECONCILED = 11;
const CHAOS_MS = 20_000;
const CHAOS_EXTRA_MS = 30_000;
const LEASE_MS = 1500;
/** Every fourth chaos action (the third, seventh, …) freezes a worker (SIGSTOP, then SIGCONT) instead of killing it. */
const FREEZE_MS = 2 * LEASE_MS;

let box: Sandbox;
let stead: Stead;
useSandbox(
  (b, s) => {
    box = b;
    stead = s;
  },
  { postgres: "chaos" },
);

it("300 runs on three hosts under a chaos loop of SIGKILLs (and SIGSTOP past the lease) all complete, with no step committed twice and no effect silently repeated", async () => {
  const seed = Number(process.env.STEAD_CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const rand = seeded(seed);
  const why = `chaos seed ${seed} (replay with STEAD_CHAOS_SEED=${seed})`;
  const ids = Array.from({ length: RUNS }, (_, i) => `c${String(i).padStart(3, "0")}`);
  const input = { steps: STEPS, delayMs: 60, jitterMs: 80, effectEvery: EFFECT_EVERY, noReconcile: [UNRECONCILED] };
  const base: WorkerConfig = { workflows: WORKFLOWS, ack: true, leaseMs: LEASE_MS, pollMs: 50, concurrency: 10 };
  const hosts = ["chaos-a", "chaos-b", "chaos-c"];
  const all: WorkerProcess[] = [];
  const spawn = (slot: number, config: WorkerConfig = base) => {
    const w = box.spawn(config, { host: hosts[slot] ?? "chaos-x" });
    all.push(w);
    return w;
  };

  const slots = [spawn(0, { ...base, start: ids.map((id) => ({ id, workflow: "many", input })) }), spawn(1), spawn(2)];
  await slots[0]?.started(60_000);
  await Promise.all(slots.map((w) => w.ready(30_000)));

  const killed = new Set<number>();
  const frozen = new Set<number>();
  let actions = 0;
  const chaosUntil = Date.now() + CHAOS_MS;
  // On a loaded machine a replacement worker may take seconds to be ready: the chaos goes on (up
  // to CHAOS_EXTRA_MS more) until it has killed three workers and frozen one, which the checks below need.
  const enough = () => killed.size >= 3 && frozen.size >= 1;
  while (Date.now() < chaosUntil || (!enough() && Date.now() < chaosUntil + CHAOS_EXTRA_MS)) {
    await new Promise((r) => setTimeout(r, 1000 + rand() * 2000));
    const slot = Math.floor(rand() * slots.length);
    const victim = slots[slot];
    if (!victim) continue;
    if (actions++ % 4 === 2) {
      // Frozen past its lease with its connections open: its runs go by lease expiry on the
      // database clock, and once continued it is a zombie whose writes the fence must refuse.
      frozen.add(victim.pid);
      victim.child.kill("SIGSTOP");
      await new Promise((r) => setTimeout(r, FREEZE_MS));
      victim.child.kill("SIGCONT");
      continue;
    }
    killed.add(victim.pid);
    await victim.kill();
    const next = spawn(slot);
    slots[slot] = next;
    await next.ready(30_000);
  }
  const chaosEnded = Date.now();

  const released = await completeAll(stead, ids, box.log, 45_000);
  for (const w of slots) expect(await w.terminate(20_000), why).toEqual({ code: 0, signal: null });

  const { journals, outputs, events } = await gather(stead, ids);
  const log = readLog(box.log);
  const { problems, tally } = checkRuns({ runIds: ids, steps: STEPS, effectEvery: EFFECT_EVERY, journals, outputs, events, log, workers: all, killed });
  expect(problems, why).toEqual([]);
  // An effect ran twice only where a frozen worker finished it after its run was taken over
  // (user code in flight cannot be recalled; the fence refused its outcome).
  expect(tally.effectRerunPids.filter((pid) => !frozen.has(pid)), why).toEqual([]);

  // The chaos bit: workers died holding runs, and other workers (or their replacements) took them over.
  expect(killed.size, why).toBeGreaterThanOrEqual(3);
  expect(frozen.size, why).toBeGreaterThanOrEqual(1);
  const takeovers = events.filter((e) => e.type === "run.claimed" && e.data.previousStatus === "running");
  expect(takeovers.length, why).toBeGreaterThan(0);
  // Frozen workers kept their liveness lock: their runs went by lease expiry on the database clock.
  const byExpiry = takeovers.filter((c) => !events.some((e) => e.type === "lease.expired" && e.runId === c.runId && e.data.fence === Number(c.data.fence) - 1));
  expect(byExpiry.length, why).toBeGreaterThan(0);
  const claimers = new Map<string, Set<unknown>>();
  for (const e of events) if (e.type === "run.claimed") claimers.set(e.runId, (claimers.get(e.runId) ?? new Set()).add(e.data.worker));
  expect([...claimers.values()].filter((s) => s.size > 1).length, why).toBeGreaterThan(0);

  // Holds: only the unreconciled effect is ever held, and each hold was released once, by the log's verdict.
  const held = events.filter((e) => e.type === "run.held");
  expect(held.filter((e) => e.data.hold !== "ambiguous_effect" && e.data.hold !== "process_failed").map((e) => e.data), why).toEqual([]);
  const ambiguous = held.filter((e) => e.data.hold === "ambiguous_effect");
  expect(ambiguous.filter((e) => e.data.step !== `s${UNRECONCILED}`).map((e) => [e.runId, e.data.step]), why).toEqual([]);
  expect(released.retry + released.result, why).toBe(ambiguous.length);
  expect(released.processFailed, why).toBe(held.length - ambiguous.length);

  const lastCompleted = Math.max(...events.filter((e) => e.type === "run.completed").map((e) => e.at));
  const reasons = events.filter((e) => e.type === "lease.expired").map((e) => String(e.data.reason).replace(/^owner (process )?\S+ /, "owner "));
  console.info(
    `[pg chaos] ${why}: ${killed.size} kills, ${frozen.size} freezes, load ended ${lastCompleted - chaosEnded} ms after the chaos, ${takeovers.length} takeovers (${byExpiry.length} by lease expiry; lease.expired: ${JSON.stringify(countBy(reasons))}), ` +
      `ambiguous holds ${ambiguous.length} (released retry ${released.retry}, result ${released.result}), process_failed ${released.processFailed}, ` +
      `reconciled ${tally.reconciled}, plain reruns ${tally.plainReruns}, effect reruns ${tally.effectReruns}, acked writes checked ${tally.acked}`,
  );
}, 180_000);

function countBy(xs: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[x] = (out[x] ?? 0) + 1;
  return out;
}
