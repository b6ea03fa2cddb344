/**
 * A worker frozen past its lease must not start a step the run's new owner has completed.
 *
 * The fsynced side-effect log orders every process's lines: a step function logs `start` (with a
 * nonce) before its effect and `done` (same nonce) after it; the journal's output names the nonce
 * whose outcome was committed. A `start` of a step after the `done` line of its committed
 * execution is a completed step's function running again: the failure these tests look for.
 *
 * - Deterministic: the worker freezes itself (SIGSTOP at the `before-step` crash point) right
 *   before a step starts; another worker takes the run over and completes it; once continued, the
 *   frozen worker must not start that step.
 * - Mid-renewal: the worker freezes itself (SIGSTOP at the `after-renewal` crash point) once a
 *   renewal it asked for before a step has come back renewed; the answer is stale when it is continued.
 * - From outside: two busy workers, one frozen (SIGSTOP) well past its lease while the other takes
 *   its runs over, then continued (SIGCONT).
 * Both on SQLite and on Postgres.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type Stead } from "../src/index.js";
import { Sandbox, useSandbox, type WorkerConfig, type WorkerProcess } from "./fixtures/crash/harness.js";
import { readLog, restartedAfterCommit, type LogLine } from "./fixtures/pg/checks.js";
import { STORE_KINDS } from "./helpers/both-stores.js";

const WORKFLOWS = fileURLToPath(new URL("./fixtures/pg/workflows.mjs", import.meta.url));

/**
 * Continues the frozen worker, which must end its execution of `runId` as lease-lost; stops both
 * workers and returns the side-effect log, in which the frozen one ran only step s00.
 */
async function continuedLost(logPath: string, zombie: WorkerProcess, taker: WorkerProcess, runId: string): Promise<LogLine[]> {
  zombie.child.kill("SIGCONT");
  const outcome = await zombie.waitFor((r) => r.type === "outcome" && r.runId === runId, "the frozen worker's outcome once continued");
  expect(outcome).toMatchObject({ outcome: { kind: "lease-lost" } });
  expect(await zombie.terminate()).toEqual({ code: 0, signal: null });
  expect(await taker.terminate()).toEqual({ code: 0, signal: null });
  const log = readLog(logPath);
  expect(log.filter((l) => l.pid === zombie.pid).map((l) => `${l.stepId} ${l.phase}`)).toEqual(["s00 start", "s00 done"]);
  return log;
}

describe.each(STORE_KINDS)("a worker frozen past its lease (%s)", (store) => {
  let box: Sandbox;
  let stead: Stead;
  useSandbox(
    (b, s) => {
      box = b;
      stead = s;
    },
    store === "postgres" ? { postgres: "frozen" } : {},
  );
  const config = (extra: WorkerConfig): WorkerConfig => ({ workflows: WORKFLOWS, pollMs: 20, ...extra });

  it("frozen right before a step starts, it does not start that step once the new owner has completed it", async () => {
    const input = { steps: 3, logStarts: true };
    const zombie = box.spawn(config({ leaseMs: 1000, start: [{ id: "f1", workflow: "many", input }] }), { crashAt: "before-step:s01", crashSignal: "SIGSTOP" });
    await zombie.stopped();
    const frozenAt = readLog(box.log);
    expect(frozenAt.map((l) => `${l.stepId} ${l.phase} ${l.pid}`)).toEqual([`s00 start ${zombie.pid}`, `s00 done ${zombie.pid}`]);

    // Alive and on this host, the frozen owner is no dead owner: the taker waits out its lease.
    const taker = box.spawn(config({ leaseMs: 1000 }));
    const run = await stead.runs.waitFor("f1", { until: (r) => r.status === "completed", timeoutMs: 20_000, pollMs: 20 });
    expect(run.lease).toBeNull();

    const log = await continuedLost(box.log, zombie, taker, "f1");
    expect(log.filter((l) => l.stepId !== "s00").map((l) => `${l.stepId} ${l.phase} ${l.pid}`)).toEqual([
      `s01 start ${taker.pid}`,
      `s01 done ${taker.pid}`,
      `s02 start ${taker.pid}`,
      `s02 done ${taker.pid}`,
    ]);
    expect(await restartedAfterCommit(stead, ["f1"], log)).toEqual([]);
  });

  it("frozen while a renewal asked for before a step was in flight, it does not start that step once the new owner has completed it", async () => {
    // No heartbeat within the test: every step after the first finds its lease older than half
    // its length and renews it on demand. The worker freezes once that renewal has come back
    // renewed, before the step may start: the answer proves the lease only until it was sent
    // plus its length, long past by the time the worker is continued.
    const input = { steps: 3, delayMs: 700, logStarts: true };
    const zombie = box.spawn(config({ leaseMs: 1000, worker: { heartbeatMs: 600_000 }, start: [{ id: "r1", workflow: "many", input }] }), { crashAt: "after-renewal", crashSignal: "SIGSTOP" });
    await zombie.stopped();
    expect(readLog(box.log).map((l) => `${l.stepId} ${l.phase} ${l.pid}`)).toEqual([`s00 start ${zombie.pid}`, `s00 done ${zombie.pid}`]);

    const taker = box.spawn(config({ leaseMs: 1000 }));
    await stead.runs.waitFor("r1", { until: (r) => r.status === "completed", timeoutMs: 20_000, pollMs: 20 });

    const log = await continuedLost(box.log, zombie, taker, "r1");
    expect(await restartedAfterCommit(stead, ["r1"], log)).toEqual([]);
  });

  it("frozen from outside for well past its lease while busy, once continued it starts no step the other worker completed", async () => {
    const ids = Array.from({ length: 6 }, (_, i) => `b${i}`);
    const input = { steps: 60, delayMs: 15, jitterMs: 20, logStarts: true };
    const busy = box.spawn(config({ leaseMs: 1500, concurrency: ids.length, start: ids.map((id) => ({ id, workflow: "many", input })) }));
    await busy.started();
    await box.waitForEffect((l) => l.stepId === "s05" && l.phase === "done", "the runs to be under way", 20_000);
    const claimedByOtherNow = async () => (await Promise.all(ids.map((id) => stead.runs.events({ runId: id })))).flat().some((e) => e.type === "run.claimed" && e.data.pid === other.child.pid);
    // Frozen before the other worker starts, so the runs are still under way however slowly it
    // starts. Hazard (SQLite): a freeze inside a write transaction keeps the file's write lock, and
    // no other process can claim until it continues; such a freeze is let go and tried again.
    busy.child.kill("SIGSTOP");
    const letGo = async (tries: number) => {
      busy.child.kill("SIGCONT");
      await new Promise((r) => setTimeout(r, 50 + tries * 30));
      busy.child.kill("SIGSTOP");
    };
    const other = box.spawn(config({ leaseMs: 1500, concurrency: ids.length }));
    // The other worker's start-up writes too, so the same hazard can keep it from becoming ready.
    let ready = false;
    for (let tries = 0; !ready && tries < 5; tries++) {
      if (tries > 0) await letGo(tries);
      ready = await other.ready(8000).then(() => true, () => false);
    }
    if (!ready) await other.ready(1);
    for (let tries = 0; tries < 5; tries++) {
      if (tries > 0) await letGo(tries);
      // Past its lease, and long enough for the other worker to take runs over and finish steps.
      await new Promise((r) => setTimeout(r, 4500));
      const until = Date.now() + 4000;
      while (Date.now() < until && !(await claimedByOtherNow())) await new Promise((r) => setTimeout(r, 100));
      if (await claimedByOtherNow()) break;
    }
    busy.child.kill("SIGCONT");
    for (const id of ids) await stead.runs.waitFor(id, { until: (r) => r.status === "completed", timeoutMs: 60_000, pollMs: 50 });
    expect(await busy.terminate(20_000)).toEqual({ code: 0, signal: null });
    expect(await other.terminate(20_000)).toEqual({ code: 0, signal: null });

    const log = readLog(box.log);
    // The freeze mattered: the other worker completed steps of runs the frozen one had claimed.
    const claimedByOther = (await Promise.all(ids.map((id) => stead.runs.events({ runId: id })))).flat().filter((e) => e.type === "run.claimed" && e.data.pid === other.child.pid);
    expect(claimedByOther.length).toBeGreaterThan(0);
    expect(await restartedAfterCommit(stead, ids, log)).toEqual([]);
  }, 90_000);
});
