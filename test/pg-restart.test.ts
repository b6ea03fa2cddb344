/**
 * Postgres restarts under load: 50 concurrent runs of 20 steps (every fourth an effect reconciled
 * from the side-effect log) across two worker processes on two hosts, while the test's private
 * server is stopped for 2 s and started again twice: once cleanly ("fast": clients are
 * disconnected) and once as a crash ("immediate": recovery at the next start).
 *
 * Every run completes; each journal holds each of its steps once; no effect happened twice; every
 * step write a worker was told had committed is in the journal. And a worker whose connection
 * dropped stopped its runs (outcome lease-lost) and came back under a new identity.
 */
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createStead, type Stead } from "../src/index.js";
import { poll, Sandbox, type WorkerConfig, type WorkerProcess } from "./fixtures/crash/harness.js";
import { checkRuns, completeAll, gather, readLog } from "./fixtures/pg/checks.js";
import { PRIVATE_SERVER_UNAVAILABLE, startPrivateServer, type PrivateServer, type TestDatabase } from "./setup/postgres.js";

const WORKFLOWS = fileURLToPath(new URL("./fixtures/pg/workflows.mjs", import.meta.url));
const RUNS = 50;
const STEPS = 20;
const EFFECT_EVERY = 4;

const skipped = PRIVATE_SERVER_UNAVAILABLE ? ` (skipped: ${PRIVATE_SERVER_UNAVAILABLE})` : "";

describe.skipIf(PRIVATE_SERVER_UNAVAILABLE)(`Postgres restarts under a load of worker processes${skipped}`, () => {
  let server: PrivateServer;
  let db: TestDatabase | undefined;
  let box: Sandbox | undefined;
  let stead: Stead | undefined;
  beforeAll(async () => {
    server = await startPrivateServer();
  });
  afterEach(async () => {
    if (server && !server.running()) await server.start();
    await box?.killAll();
    await stead?.close();
    await db?.drop();
    box?.remove();
  });
  afterAll(() => server?.close());

  it("50 runs on two workers survive Postgres stopped for 2 s twice (fast, then immediate): all complete, nothing lost or applied twice", async () => {
    db = await server.freshDatabase("restart");
    box = new Sandbox({ store: db.url });
    const sandbox = box;
    stead = createStead({ store: db.url });
    await stead.ready();

    const ids = Array.from({ length: RUNS }, (_, i) => `p${String(i).padStart(2, "0")}`);
    const input = { steps: STEPS, delayMs: 100, jitterMs: 200, effectEvery: EFFECT_EVERY };
    const base: WorkerConfig = { workflows: WORKFLOWS, ack: true, leaseMs: 4000, pollMs: 50, concurrency: RUNS / 2 };
    const workers: WorkerProcess[] = [
      sandbox.spawn({ ...base, start: ids.map((id) => ({ id, workflow: "many", input })) }, { host: "restart-a" }),
      sandbox.spawn(base, { host: "restart-b" }),
    ];
    await workers[0]?.started(30_000);
    await Promise.all(workers.map((w) => w.ready(30_000)));

    // Step outcomes the store acknowledged so far.
    const acked = () => workers.reduce((n, w) => n + w.reports.reduce((k, r) => k + (r.type === "acked" ? r.steps.filter((x) => x.status === "completed").length : 0), 0), 0);
    const ackedBefore: number[] = [];
    const identities = (w: WorkerProcess) => new Set(w.reports.flatMap((r) => (r.type === "claimed" ? [r.workerId] : [])));
    let known: Set<string>[] = workers.map(() => new Set());
    for (const mode of ["fast", "immediate"] as const) {
      // Restart while the load is running, once both workers are back at work under a new
      // identity since the last restart and a hundred more step outcomes have committed.
      const from = acked();
      const before = known;
      const back = () => workers.every((w, i) => [...identities(w)].some((id) => !before[i]?.has(id)));
      await poll(() => (acked() >= from + 100 && back() ? true : undefined), `both workers back and 100 more acknowledged step outcomes before the ${mode} restart`, 30_000);
      known = workers.map(identities);
      ackedBefore.push(acked());
      await server.restart(2_000, mode);
    }

    await completeAll(stead, ids, sandbox.log, 60_000);
    for (const w of workers) expect(await w.terminate(20_000), w.stderr).toEqual({ code: 0, signal: null });

    // Both restarts fell inside the load: steps were still to be written after each.
    const stepWrites = RUNS * STEPS;
    for (const n of ackedBefore) expect(n).toBeLessThan(stepWrites);

    const { journals, outputs, events } = await gather(stead, ids);
    const { problems, tally } = checkRuns({ runIds: ids, steps: STEPS, effectEvery: EFFECT_EVERY, journals, outputs, events, log: readLog(sandbox.log), workers, killed: new Set() });
    expect(problems).toEqual([]);
    // No process here was frozen or killed, so no effect could be in flight in a process that had
    // lost the run: a rerun would mean an execution resumed user code after it was aborted.
    expect(tally.effectReruns).toBe(0);
    // No hold was needed: interrupted effects were reconciled from the log.
    expect(events.filter((e) => e.type === "run.held").map((e) => [e.runId, e.data])).toEqual([]);

    // Each worker lost its connection at each restart: it ended the runs it held (lease-lost)
    // and claimed again under a new identity (initial + one per restart).
    for (const w of workers) {
      expect(w.outcomes().filter((o) => o.kind === "lease-lost").length, JSON.stringify(countBy(w.outcomes().map((o) => o.kind)))).toBeGreaterThan(0);
      expect(identities(w).size).toBeGreaterThanOrEqual(3);
    }
    const takeovers = events.filter((e) => e.type === "run.claimed" && e.data.previousStatus === "running").length;
    console.info(
      `[pg restart] step outcomes acknowledged before the restarts ${ackedBefore.join(", ")} of ${stepWrites}; takeovers ${takeovers}; reconciled ${tally.reconciled}; ` +
        `plain reruns ${tally.plainReruns}; effect reruns ${tally.effectReruns}; acked writes checked ${tally.acked}; ` +
        `refused writes ${JSON.stringify(countBy(workers.flatMap((w) => w.reports.flatMap((r) => (r.type === "refused" ? [r.steps.map((x) => x.replace(/^s\d+:/, "")).join("+") || "run"] : [])))))}, ` +
        `failed writes ${workers.reduce((n, w) => n + w.reports.filter((r) => r.type === "commit-failed").length, 0)}`,
    );
  }, 120_000);
});

function countBy(xs: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[x] = (out[x] ?? 0) + 1;
  return out;
}
