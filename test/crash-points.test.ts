/**
 * Real-process crash tests: a worker process SIGKILLs itself at a named crash point inside the
 * engine (STEAD_CRASH_AT), then a fresh worker process resumes the run. The fsynced side-effect
 * log says how many times each step's effect really happened; the store says what was recorded.
 */
import { describe, expect, it } from "vitest";
import { type RunInfo, type Stead } from "../src/index.js";
import { SETTLED, Sandbox, useSandbox, done, type RunToStart, type WorkerProcess } from "./fixtures/crash/harness.js";

let box: Sandbox;
let stead: Stead;
useSandbox((b, s) => {
  box = b;
  stead = s;
});

const settled = (id: string, timeoutMs = 15_000): Promise<RunInfo> =>
  stead.runs.waitFor(id, { until: (r) => SETTLED.includes(r.status), timeoutMs, pollMs: 20 });

/** Starts `runs` in a worker that must die by SIGKILL at `crashAt`, and returns that dead worker. */
async function crash(runs: RunToStart[], crashAt: string, hit?: number): Promise<WorkerProcess> {
  const w = box.spawn({ start: runs, leaseMs: 5000, pollMs: 20 }, { crashAt, ...(hit !== undefined ? { hit } : {}) });
  const exit = await w.died();
  expect(exit.signal, `worker stderr: ${w.stderr}`).toBe("SIGKILL");
  return w;
}

function resume(): WorkerProcess {
  return box.spawn({ leaseMs: 5000, pollMs: 20 });
}

async function stepsOf(id: string): Promise<Record<string, { status: string; attempt: number; output: unknown }>> {
  const out: Record<string, { status: string; attempt: number; output: unknown }> = {};
  for (const s of await stead.runs.journal(id)) out[s.id] = { status: s.status, attempt: s.attempt, output: s.output };
  return out;
}

async function eventTypes(id: string): Promise<string[]> {
  return (await stead.runs.events({ runId: id })).map((e) => e.type);
}

describe("crash at a named point, resumed by a fresh worker process", () => {
  it("before-intent: the effect never started, so the resumed worker runs it once, with no hold", async () => {
    const first = await crash([{ id: "r1", workflow: "chain", input: { x: 1 } }], "before-intent:b");
    const j0 = await stepsOf("r1");
    expect(j0.a?.status).toBe("completed");
    expect(j0.b).toBeUndefined();
    expect(done(box.effects(), "r1", "b")).toHaveLength(0);

    const second = resume();
    const run = await settled("r1");
    expect(run.status).toBe("completed");
    expect(run.output).toEqual({ a: "a(1)", b: "b(a(1))", c: "c(b(a(1)))" });

    const log = box.effects();
    expect(done(log, "r1", "a").map((l) => l.pid)).toEqual([first.pid]);
    expect(done(log, "r1", "b").map((l) => [l.pid, l.attempt])).toEqual([[second.pid, 1]]);
    expect(done(log, "r1", "c").map((l) => l.pid)).toEqual([second.pid]);
    const types = await eventTypes("r1");
    expect(types).not.toContain("run.held");
    expect(types.filter((t) => t === "step.intent")).toHaveLength(1);
    expect(await second.terminate()).toEqual({ code: 0, signal: null });
  });

  it("after-intent: the intent has no outcome, so the run is held ambiguous_effect; release with retry runs it as attempt 2", async () => {
    await crash([{ id: "r1", workflow: "chain", input: { x: 2 } }], "after-intent:b");
    expect((await stepsOf("r1")).b).toMatchObject({ status: "intent", attempt: 1 });
    expect(done(box.effects(), "r1", "b")).toHaveLength(0);

    const second = resume();
    const held = await settled("r1");
    expect(held.status).toBe("held");
    const [hold] = await stead.holds.list({ runId: "r1" });
    expect(hold).toMatchObject({ kind: "ambiguous_effect", stepId: "b", status: "open" });
    expect(hold?.details).toMatchObject({ step: "b", attempt: 1, idempotencyKey: "r1:b" });
    const heldEvent = (await stead.runs.events({ runId: "r1" })).find((e) => e.type === "run.held");
    expect(heldEvent?.data).toMatchObject({ hold: "ambiguous_effect", step: "b" });
    expect(done(box.effects(), "r1", "b")).toHaveLength(0);

    await stead.runs.release("r1", "ambiguous_effect", { choice: "retry", by: "test" });
    const run = await settled("r1");
    expect(run.status).toBe("completed");
    expect(run.output).toEqual({ a: "a(2)", b: "b(a(2))", c: "c(b(a(2)))" });

    const log = box.effects();
    expect(done(log, "r1", "a")).toHaveLength(1);
    expect(done(log, "r1", "b").map((l) => [l.pid, l.attempt])).toEqual([[second.pid, 2]]);
    expect(done(log, "r1", "c")).toHaveLength(1);
    expect((await stepsOf("r1")).b).toMatchObject({ status: "completed", attempt: 2 });
    const released = (await stead.runs.events({ runId: "r1" })).find((e) => e.type === "hold.released");
    expect(released?.data).toMatchObject({ hold: "ambiguous_effect", choice: "retry", step: "b" });
    await second.terminate();
  });

  it("after-effect: the effect happened but its outcome was not committed; held, not repeated; release with a supplied result", async () => {
    const first = await crash([{ id: "r1", workflow: "chain", input: { x: 3 } }], "after-effect:b");
    expect((await stepsOf("r1")).b).toMatchObject({ status: "intent", attempt: 1 });
    expect(done(box.effects(), "r1", "b").map((l) => l.pid)).toEqual([first.pid]);

    const second = resume();
    expect((await settled("r1")).status).toBe("held");
    expect((await stead.holds.list({ runId: "r1" })).map((h) => h.kind)).toEqual(["ambiguous_effect"]);
    // The hold is the whole reaction: the resumed worker did not run the effect again.
    expect(done(box.effects(), "r1", "b").map((l) => l.pid)).toEqual([first.pid]);

    await stead.runs.release("r1", "ambiguous_effect", { choice: "result", result: "b(checked by hand)", by: "test" });
    const run = await settled("r1");
    expect(run.status).toBe("completed");
    expect(run.output).toEqual({ a: "a(3)", b: "b(checked by hand)", c: "c(b(checked by hand))" });

    const log = box.effects();
    expect(done(log, "r1", "a").map((l) => l.pid)).toEqual([first.pid]);
    expect(done(log, "r1", "b").map((l) => l.pid)).toEqual([first.pid]);
    expect(done(log, "r1", "c").map((l) => l.pid)).toEqual([second.pid]);
    expect((await stepsOf("r1")).b).toMatchObject({ status: "completed", output: "b(checked by hand)" });
    await second.terminate();
  });

  it("after-effect on an effect declared retry: always: no hold, the effect runs again as attempt 2", async () => {
    const first = await crash([{ id: "r1", workflow: "chain", input: { x: 4, bRetry: true } }], "after-effect:b");
    const second = resume();
    const run = await settled("r1");
    expect(run.status).toBe("completed");
    expect(run.output).toEqual({ a: "a(4)", b: "b(a(4))", c: "c(b(a(4)))" });
    const log = box.effects();
    expect(done(log, "r1", "a").map((l) => l.pid)).toEqual([first.pid]);
    expect(done(log, "r1", "b").map((l) => [l.pid, l.attempt])).toEqual([
      [first.pid, 1],
      [second.pid, 2],
    ]);
    expect(done(log, "r1", "c").map((l) => l.pid)).toEqual([second.pid]);
    const events = await stead.runs.events({ runId: "r1" });
    expect(events.map((e) => e.type)).not.toContain("run.held");
    expect(events.filter((e) => e.type === "step.intent").map((e) => e.data.because ?? null)).toEqual([null, "retry: always"]);
    await second.terminate();
  });

  it.each([
    ["a", "a plain step"],
    ["b", "an effect"],
  ])("after-commit of %s (%s): the committed step is not executed again", async (stepId) => {
    const first = await crash([{ id: "r1", workflow: "chain", input: { x: 5 } }], `after-commit:${stepId}`);
    expect((await stepsOf("r1"))[stepId]?.status).toBe("completed");

    const second = resume();
    const run = await settled("r1");
    expect(run.status).toBe("completed");
    expect(run.output).toEqual({ a: "a(5)", b: "b(a(5))", c: "c(b(a(5)))" });
    const log = box.effects();
    expect(done(log, "r1", "a").map((l) => l.pid)).toEqual([first.pid]);
    expect(done(log, "r1", "b").map((l) => l.pid)).toEqual([stepId === "b" ? first.pid : second.pid]);
    expect(done(log, "r1", "c").map((l) => l.pid)).toEqual([second.pid]);
    expect(await eventTypes("r1")).not.toContain("run.held");
    await second.terminate();
  });

  it("mid-group-commit: a torn batch of several runs' units; plain steps re-run at most once more, effects are held, never silently repeated", async () => {
    // Four runs in lockstep: batch 1 = a/x, batch 2 = b intents + y, batch 3 = b outcomes of all
    // four (effects for chain runs, plain steps for plain runs). The 2nd batch touching "b" dies.
    const chains = ["c0", "c1"];
    const plains = ["p0", "p1"];
    const runs: RunToStart[] = [
      ...chains.map((id, i) => ({ id, workflow: "chain" as const, input: { x: i } })),
      ...plains.map((id, i) => ({ id, workflow: "plain" as const, input: { x: i } })),
    ];
    const first = await crash(runs, "mid-group-commit:b", 2);

    const j0 = new Map<string, Awaited<ReturnType<typeof stepsOf>>>();
    for (const r of runs) j0.set(r.id, await stepsOf(r.id));
    const log0 = box.effects();
    // Every run's "b" effect happened and none of their outcomes was committed: the torn batch carried all four units.
    for (const id of [...chains, ...plains]) expect(done(log0, id, "b").map((l) => l.pid)).toEqual([first.pid]);
    for (const id of chains) expect(j0.get(id)?.b).toMatchObject({ status: "intent" });
    for (const id of plains) expect(j0.get(id)?.b).toBeUndefined();

    const second = resume();
    for (const id of plains) expect((await settled(id)).status).toBe("completed");
    for (const id of chains) expect((await settled(id)).status).toBe("held");
    for (const id of chains) {
      expect((await stead.holds.list({ runId: id })).map((h) => [h.kind, h.stepId])).toEqual([["ambiguous_effect", "b"]]);
      expect(done(box.effects(), id, "b")).toHaveLength(1);
    }

    await stead.runs.release("c0", "ambiguous_effect", { choice: "skip", by: "test" });
    await stead.runs.release("c1", "ambiguous_effect", { choice: "retry", by: "test" });
    for (const id of chains) expect((await settled(id)).status).toBe("completed");

    const log = box.effects();
    for (const r of runs) {
      const journal = j0.get(r.id) ?? {};
      const stepIds = r.workflow === "chain" ? ["a", "b", "c"] : ["x", "y", "b"];
      for (const s of stepIds) {
        const lines = done(log, r.id, s);
        if (journal[s]?.status === "completed") {
          expect(lines, `${r.id}/${s} was committed before the crash`).toHaveLength(1);
        } else if (r.workflow === "plain") {
          // Torn plain step: it ran before the crash and again after, never a third time.
          expect(lines.length, `${r.id}/${s}`).toBeLessThanOrEqual(2);
        }
      }
    }
    for (const id of plains) {
      expect(done(log, id, "b").map((l) => l.pid)).toEqual([first.pid, second.pid]);
    }
    // skip: the effect is not repeated and the step reports its unknown outcome.
    expect(done(log, "c0", "b").map((l) => l.pid)).toEqual([first.pid]);
    expect((await stead.runs.get("c0")).output).toEqual({ a: "a(0)", b: "b-failed(interrupted: outcome unknown)", c: "c(b-failed(interrupted: outcome unknown))" });
    expect((await stepsOf("c0")).b?.status).toBe("failed");
    // retry: repeated only because a person chose it, as attempt 2.
    expect(done(log, "c1", "b").map((l) => [l.pid, l.attempt])).toEqual([
      [first.pid, 1],
      [second.pid, 2],
    ]);
    expect((await stead.runs.get("c1")).output).toEqual({ a: "a(1)", b: "b(a(1))", c: "c(b(a(1)))" });
    expect((await stead.runs.get("p1")).output).toEqual({ x: "x(1)", y: "y(x(1))", b: "b(y(x(1)))" });
    await second.terminate();
  });
});

describe("killed from the outside", () => {
  it("SIGKILL during a slow plain step: the resumed worker runs the step again and the run completes", async () => {
    const first = box.spawn({ start: [{ id: "s1", workflow: "slow" }], leaseMs: 5000, pollMs: 20 }, { slowMs: 60_000 });
    await box.waitForEffect((l) => l.runId === "s1" && l.stepId === "slow" && l.phase === "start", "the slow step to start");
    expect(await first.kill()).toEqual({ code: null, signal: "SIGKILL" });

    const second = box.spawn({ leaseMs: 5000, pollMs: 20 }, { slowMs: 20 });
    const run = await settled("s1");
    expect(run.status).toBe("completed");
    expect(run.output).toEqual({ first: "first", slowBy: second.pid, after: "after" });

    const log = box.effects().filter((l) => l.runId === "s1");
    expect(log.map((l) => `${l.stepId} ${l.phase} ${l.pid === first.pid ? "first" : "second"}`)).toEqual([
      "first done first",
      "slow start first",
      "slow start second",
      "slow done second",
      "after done second",
    ]);
    const claims = (await stead.runs.events({ runId: "s1" })).filter((e) => e.type === "run.claimed");
    expect(claims.map((e) => [e.data.pid, e.data.previousStatus])).toEqual([
      [first.pid, "pending"],
      [second.pid, "running"],
    ]);
    await second.terminate();
  });
});
