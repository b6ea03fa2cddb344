/**
 * Handing a run from one worker process to the next: after a SIGKILL, a worker on the same host
 * reclaims the dead owner's run without waiting out its lease (the owner is known by host, pid and
 * process start time); after a SIGTERM, the worker finishes its in-flight step and releases the run.
 */
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { expect, it } from "vitest";
import { type Stead } from "../src/index.js";
import { Sandbox, useSandbox, done } from "./fixtures/crash/harness.js";

let box: Sandbox;
let stead: Stead;
useSandbox((b, s) => {
  box = b;
  stead = s;
});

/** Field 22 of /proc/<pid>/stat: the process start time in clock ticks since boot. */
function startTicks(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? "";
}

it.runIf(process.platform === "linux")("a dead owner's run is reclaimed at once by a worker on the same host, long before its lease would expire", async () => {
  const first = box.spawn({ start: [{ id: "d1", workflow: "slow" }], leaseMs: 60_000, pollMs: 20 }, { slowMs: 60_000 });
  await box.waitForEffect((l) => l.runId === "d1" && l.stepId === "slow" && l.phase === "start", "the slow step to start");
  const held = await stead.store.getRun("d1");
  expect(held).toMatchObject({ status: "running", ownerHost: hostname(), ownerPid: first.pid, ownerStart: `proc:${startTicks(first.pid)}` });
  const oldExpiry = held?.leaseExpiresAt ?? 0;
  expect(await first.kill()).toEqual({ code: null, signal: "SIGKILL" });

  const second = box.spawn({ leaseMs: 60_000, pollMs: 20 }, { slowMs: 20 });
  const run = await stead.runs.waitFor("d1", { timeoutMs: 15_000, pollMs: 20 });
  expect(run.status).toBe("completed");
  expect(run.output).toEqual({ first: "first", slowBy: second.pid, after: "after" });

  const events = await stead.runs.events({ runId: "d1" });
  const expired = events.find((e) => e.type === "lease.expired");
  const claim = events.find((e) => e.type === "run.claimed" && e.data.pid === second.pid);
  expect(expired?.data).toMatchObject({ fence: held?.fence, reason: `owner process ${first.pid} on ${hostname()} is gone` });
  expect(claim?.data).toMatchObject({ previousStatus: "running", fence: (held?.fence ?? 0) + 1, host: hostname() });
  expect(claim?.seq).toBeGreaterThan(expired?.seq ?? Infinity);
  // The old lease was still valid when the new worker claimed: it was ended because its owner died, not by expiry.
  expect(claim?.at).toBeLessThan(oldExpiry);

  const log = box.effects();
  expect(log.filter((l) => l.stepId === "slow" && l.phase === "start").map((l) => l.pid)).toEqual([first.pid, second.pid]);
  expect(done(log, "d1", "slow").map((l) => l.pid)).toEqual([second.pid]);
  expect(done(log, "d1", "first").map((l) => l.pid)).toEqual([first.pid]);
  expect(await second.terminate()).toEqual({ code: 0, signal: null });
});

it("SIGTERM mid-step: the step finishes and commits, the run is released as pending, and the next worker does not run it again", async () => {
  const first = box.spawn({ start: [{ id: "t1", workflow: "slow" }], leaseMs: 1000, pollMs: 20 }, { slowMs: 1500 });
  await box.waitForEffect((l) => l.runId === "t1" && l.stepId === "slow" && l.phase === "start", "the slow step to start");
  expect(done(box.effects(), "t1", "slow")).toHaveLength(0);
  expect(await first.terminate()).toEqual({ code: 0, signal: null });
  expect(first.outcomes("t1")).toEqual([{ runId: "t1", kind: "released" }]);

  const released = await stead.runs.get("t1");
  expect(released.status).toBe("pending");
  expect(released.lease).toBeNull();
  expect((await stead.runs.journal("t1")).map((s) => [s.id, s.status, s.attempt])).toEqual([
    ["first", "completed", 1],
    ["slow", "completed", 1],
  ]);
  const events = await stead.runs.events({ runId: "t1" });
  const types = events.map((e) => e.type);
  expect(types.at(-1)).toBe("run.released");
  expect(events.at(-1)?.data).toMatchObject({ reason: "worker shutdown" });
  expect(types.lastIndexOf("step.completed")).toBeLessThan(types.indexOf("run.released"));
  expect(done(box.effects(), "t1", "after")).toHaveLength(0);

  const second = box.spawn({ leaseMs: 1000, pollMs: 20 }, { slowMs: 700 });
  const run = await stead.runs.waitFor("t1", { timeoutMs: 10_000, pollMs: 20 });
  expect(run.status).toBe("completed");
  expect(run.output).toEqual({ first: "first", slowBy: first.pid, after: "after" });
  const log = box.effects();
  expect(log.filter((l) => l.stepId === "slow").map((l) => `${l.phase} ${l.pid}`)).toEqual([`start ${first.pid}`, `done ${first.pid}`]);
  expect(done(log, "t1", "after").map((l) => l.pid)).toEqual([second.pid]);
  const claims = (await stead.runs.events({ runId: "t1" })).filter((e) => e.type === "run.claimed");
  // A clean handover: the second claim follows a release, not a lost lease.
  expect(claims.map((e) => e.data.previousStatus)).toEqual(["pending", "pending"]);
  expect(await second.terminate()).toEqual({ code: 0, signal: null });
});
