/**
 * Waits survive the death of every worker: a run parked at an approval or a durable timer is
 * answered (or falls due) while no worker process runs, and a fresh worker process resumes it.
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

it("an approval given while no worker runs resumes the run in the next worker process", async () => {
  const first = box.spawn({ start: [{ id: "g1", workflow: "gate", input: { x: "deploy" } }], leaseMs: 1000, pollMs: 20 });
  await first.started();
  await stead.runs.waitFor("g1", { until: (r) => r.status === "waiting", timeoutMs: 10_000, pollMs: 20 });
  expect((await stead.runs.waits("g1")).map((w) => [w.kind, w.name, w.status])).toEqual([["approval", "ok", "open"]]);
  expect(await first.kill()).toEqual({ code: null, signal: "SIGKILL" });

  await stead.runs.approve("g1", "ok", { by: "alice", reason: "looks fine" });
  // No worker runs: the answer is durable state, the run merely runnable.
  expect((await stead.runs.get("g1")).status).toBe("pending");

  const second = box.spawn({ leaseMs: 1000, pollMs: 20 });
  const run = await stead.runs.waitFor("g1", { timeoutMs: 10_000, pollMs: 20 });
  expect(run.status).toBe("completed");
  expect(run.output).toEqual({ prep: "prep(deploy)", approved: true, by: "alice", act: "acted" });

  const log = box.effects();
  expect(done(log, "g1", "prep").map((l) => l.pid)).toEqual([first.pid]);
  expect(done(log, "g1", "act").map((l) => l.pid)).toEqual([second.pid]);
  const types = (await stead.runs.events({ runId: "g1" })).map((e) => e.type);
  expect(types.indexOf("approval.approved")).toBeGreaterThan(types.indexOf("run.waiting"));
  expect(types.filter((t) => t === "step.completed")).toHaveLength(2);
  expect(await second.terminate()).toEqual({ code: 0, signal: null });
});

it("a durable timer whose worker was killed during the sleep is woken by a fresh worker after it falls due", async () => {
  // A slow poll: this worker must not reach its own sweep after the timer falls due, before it is killed.
  const first = box.spawn({ start: [{ id: "n1", workflow: "nap", input: { sleep: "1s" } }], leaseMs: 1000, pollMs: 10_000 });
  await first.started();
  await stead.runs.waitFor("n1", { until: (r) => r.status === "waiting", timeoutMs: 10_000, pollMs: 20 });
  const [timer] = await stead.runs.waits("n1");
  expect(timer).toMatchObject({ kind: "timer", name: "t", status: "open" });
  expect(await first.kill()).toEqual({ code: null, signal: "SIGKILL" });
  expect((await stead.runs.get("n1")).status).toBe("waiting");

  const second = box.spawn({ leaseMs: 1000, pollMs: 20 });
  const run = await stead.runs.waitFor("n1", { timeoutMs: 10_000, pollMs: 20 });
  expect(run.status).toBe("completed");
  expect(run.output).toEqual({ before: "before", after: "after" });

  const [woken] = await stead.runs.waits("n1");
  expect(woken?.status).toBe("resolved");
  expect(woken?.resolvedAt).toBeGreaterThanOrEqual(timer?.wakeAt ?? Infinity);
  const journal = await stead.runs.journal("n1");
  const after = journal.find((s) => s.id === "after");
  expect(after?.startedAt).toBeGreaterThanOrEqual(timer?.wakeAt ?? Infinity);
  expect(journal.map((s) => [s.id, s.kind, s.status])).toEqual([
    ["before", "step", "completed"],
    ["t", "sleep", "completed"],
    ["after", "step", "completed"],
  ]);
  const resolved = (await stead.runs.events({ runId: "n1" })).find((e) => e.type === "wait.resolved");
  expect(resolved?.data).toMatchObject({ wait: "t", kind: "timer", wakeAt: timer?.wakeAt });

  const log = box.effects();
  expect(done(log, "n1", "before").map((l) => l.pid)).toEqual([first.pid]);
  expect(done(log, "n1", "after").map((l) => l.pid)).toEqual([second.pid]);
  expect(await second.terminate()).toEqual({ code: 0, signal: null });
});
