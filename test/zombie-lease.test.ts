/**
 * A zombie worker: stopped (SIGSTOP) past its lease while another worker process takes the run
 * over and finishes it. Continued (SIGCONT), the zombie's writes are refused by the fence and the
 * store holds nothing from it after the takeover.
 */
import { expect, it } from "vitest";
import { type Stead } from "../src/index.js";
import { Sandbox, useSandbox, done } from "./fixtures/crash/harness.js";

let box: Sandbox;
let stead: Stead;
useSandbox((b, s) => {
  box = b;
  stead = s;
});

it("a worker stopped past its lease is fenced out after SIGCONT; the run's result is the new owner's", async () => {
  // The zombie's slow step outlasts its SIGSTOP: when continued, the step finishes and tries to commit.
  const zombie = box.spawn({ start: [{ id: "z1", workflow: "slow" }], leaseMs: 500, pollMs: 20 }, { slowMs: 2000 });
  await zombie.ready();
  await box.waitForEffect((l) => l.runId === "z1" && l.stepId === "slow" && l.phase === "start" && l.pid === zombie.pid, "the zombie's slow step to start");
  const before = await stead.runs.get("z1");
  expect(before.lease?.pid).toBe(zombie.pid);
  zombie.child.kill("SIGSTOP");

  // Same host, and the zombie's process is alive: no dead-owner shortcut, the taker waits out the lease.
  const taker = box.spawn({ leaseMs: 500, pollMs: 20 }, { slowMs: 20 });
  const run = await stead.runs.waitFor("z1", { until: (r) => r.status === "completed", timeoutMs: 15_000, pollMs: 20 });
  expect(run.output).toEqual({ first: "first", slowBy: taker.pid, after: "after" });
  expect(run.fence).toBeGreaterThan(before.fence);

  const events = await stead.runs.events({ runId: "z1" });
  const takeover = events.find((e) => e.type === "run.claimed" && e.data.pid === taker.pid);
  expect(takeover?.data).toMatchObject({ previousStatus: "running", fence: before.fence + 1 });
  expect(events.map((e) => e.type)).not.toContain("lease.expired");
  const afterTakeover = events.filter((e) => takeover && e.seq > takeover.seq).map((e) => [e.type, e.data.step ?? null]);
  expect(afterTakeover).toEqual([
    ["step.completed", "slow"],
    ["step.completed", "after"],
    ["run.completed", null],
  ]);
  const journal = await stead.runs.journal("z1");
  const logAtTakeover = box.effects();

  zombie.child.kill("SIGCONT");
  const outcome = await zombie.waitFor((r) => r.type === "outcome" && r.runId === "z1", "the zombie's outcome");
  expect(outcome).toMatchObject({ outcome: { kind: "lease-lost" } });
  // Its slow step ends 2 s after it began, whenever the process runs again; its commit must be refused.
  const refused = await zombie.waitFor((r) => r.type === "refused" && r.runId === "z1", "the zombie's step write to be refused");
  expect(refused).toMatchObject({ reason: "lease", steps: ["slow:completed"] });
  expect(await zombie.terminate()).toEqual({ code: 0, signal: null });
  expect(await taker.terminate()).toEqual({ code: 0, signal: null });

  // Nothing from the zombie reached the store after the takeover.
  expect(await stead.runs.events({ runId: "z1" })).toEqual(events);
  expect(await stead.runs.journal("z1")).toEqual(journal);
  expect(await stead.runs.get("z1")).toMatchObject({ status: "completed", output: run.output, fence: before.fence + 1 });
  // The zombie's user code may finish its in-flight step (at-least-once), but it went no further.
  const zombieLines = box.effects().filter((l) => l.pid === zombie.pid);
  expect(zombieLines.map((l) => `${l.stepId} ${l.phase}`)).toEqual(["first done", "slow start", "slow done"]);
  expect(logAtTakeover.filter((l) => l.pid === zombie.pid).map((l) => `${l.stepId} ${l.phase}`)).toEqual(["first done", "slow start"]);
  const log = box.effects();
  expect(done(log, "z1", "after").map((l) => l.pid)).toEqual([taker.pid]);
  expect(done(log, "z1", "first").map((l) => l.pid)).toEqual([zombie.pid]);
});
