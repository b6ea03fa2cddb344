import { getEventListeners } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { SteadError, workflow, type ApprovalDecision, type ExecutionOutcome, type Stead } from "../src/index.js";
import { FAST_FOLLOW, steadHarness } from "./helpers/temp-store.js";
import { caught, deferred, waitUntil } from "./helpers/waiting.js";

const h = steadHarness();
afterEach(() => h.cleanup());

/** Everything a decision could have changed about a run. */
async function state(stead: Stead, id: string) {
  const run = await stead.runs.get(id);
  return { run, journal: await stead.runs.journal(id), waits: await stead.runs.waits(id), holds: await stead.holds.list({ runId: id, open: false }), events: (await stead.runs.events()).length };
}

describe("pause and resume", () => {
  const simple = workflow("simple", async (ctx, n: number) => ctx.step("times-ten", () => n * 10));

  it("a paused pending run is not claimed until resumed", async () => {
    const stead = h.create();
    const { id } = await stead.runs.start(simple, 1);
    expect(await stead.runs.pause(id)).toMatchObject({ state: "paused", already: false });
    // Created after the paused run: claims go in creation order, so once the marker ran, the paused run was passed over.
    const { id: marker } = await stead.runs.start(simple, 2);
    h.worker(stead, { definitions: [simple] }).start();
    expect((await stead.runs.waitFor(marker, { timeoutMs: 10_000 })).output).toBe(20);
    expect((await stead.runs.get(id)).status).toBe("paused");
    expect(await stead.runs.journal(id)).toEqual([]);
    await stead.runs.resume(id);
    const done = await stead.runs.waitFor(id, { timeoutMs: 10_000 });
    expect(done.output).toBe(10);
  });

  it("a paused waiting run takes its answer but stays paused until resumed", async () => {
    const wf = workflow("pause-waiting", async (ctx) => {
      const d = await ctx.approval("ok");
      return d.approved;
    });
    const stead = h.create();
    const parked = await stead.run(wf, null, FAST_FOLLOW);
    expect(await stead.runs.pause(parked.id)).toMatchObject({ state: "paused", already: false });
    await stead.runs.approve(parked.id, "ok");
    const paused = await stead.runs.follow(parked.id, [wf], FAST_FOLLOW);
    expect(paused.status).toBe("paused");
    expect((await stead.runs.journal(parked.id))[0]).toMatchObject({ id: "ok", status: "completed" });
    await stead.runs.resume(parked.id);
    const done = await stead.runs.follow(parked.id, [wf], FAST_FOLLOW);
    expect(done.status).toBe("completed");
    expect(done.output).toBe(true);
  });

  it("a running run parks after its current step, and resumes from the next", async () => {
    const gate = deferred();
    const counts = { one: 0, two: 0 };
    const wf = workflow("pause-running", async (ctx) => {
      await ctx.step("one", async () => {
        counts.one++;
        await gate.promise;
        return 1;
      });
      await ctx.step("two", () => ++counts.two);
      return "done";
    });
    const stead = h.create();
    const { id } = await stead.runs.start(wf, null);
    h.worker(stead, { definitions: [wf] }).start();
    await waitUntil("step one to start", () => counts.one === 1);
    expect(await stead.runs.pause(id)).toMatchObject({ state: "pause-requested", already: false });
    expect((await stead.runs.get(id)).pauseRequested).toBe(true);
    gate.resolve();
    const paused = await stead.runs.waitFor(id, { until: (r) => r.status === "paused", timeoutMs: 10_000 });
    expect(paused.pauseRequested).toBe(false);
    expect(paused.lease).toBeNull();
    expect((await stead.runs.journal(id)).map((s) => [s.id, s.status])).toEqual([["one", "completed"]]);
    expect(counts).toEqual({ one: 1, two: 0 });
    await stead.runs.resume(id);
    const done = await stead.runs.waitFor(id, { timeoutMs: 10_000 });
    expect(done.output).toBe("done");
    expect(counts).toEqual({ one: 1, two: 1 });
  });

  it("resume refuses a run that is not paused", async () => {
    const stead = h.create();
    const { id } = await stead.runs.start(simple, 1);
    const e = await caught(() => stead.runs.resume(id));
    expect((e as SteadError).code).toBe("STEAD_INVALID_STATE");
  });
});

describe("cancel", () => {
  it("stops a running run: the in-flight step's write is refused and no further step runs", async () => {
    const gate = deferred();
    const counts = { one: 0, two: 0 };
    const wf = workflow("cancel-running", async (ctx) => {
      await ctx.step("one", async () => {
        counts.one++;
        await gate.promise;
        return 1;
      });
      await ctx.step("two", () => ++counts.two);
    });
    const stead = h.create();
    const { id } = await stead.runs.start(wf, null);
    const w = h.worker(stead, { definitions: [wf] });
    const outcome = new Promise<ExecutionOutcome>((resolve) => w.on("outcome", (runId, o) => runId === id && resolve(o)));
    w.start();
    await waitUntil("step one to start", () => counts.one === 1);
    expect(await stead.runs.cancel(id, { reason: "stop" })).toMatchObject({ cancelled: [id], already: false });
    gate.resolve();
    expect((await outcome).kind).toBe("lease-lost");
    const run = await stead.runs.get(id);
    expect(run.status).toBe("cancelled");
    expect(run.error?.code).toBe("STEAD_CANCELLED");
    expect(await stead.runs.journal(id)).toEqual([]);
    expect(counts.two).toBe(0);
    expect((await stead.runs.events({ runId: id })).map((e) => e.type)).not.toContain("step.completed");
  });
});

describe("approvals, signals and timers", () => {
  it("approve and deny carry who decided and why", async () => {
    const wf = workflow("ship", async (ctx, what: string) => ctx.approval("ship-it", { what }));
    const stead = h.create();
    const a = await stead.run(wf, "v1", FAST_FOLLOW);
    const d = await stead.run(wf, "v2", FAST_FOLLOW);
    expect((await stead.runs.waits(a.id))[0]).toMatchObject({ name: "ship-it", kind: "approval", status: "open", request: { what: "v1" } });
    await stead.runs.approve(a.id, "ship-it", { by: "ann", reason: "lgtm" });
    await stead.runs.deny(d.id, "ship-it", { by: "bob", reason: "not yet" });
    const approved = await stead.runs.follow(a.id, [wf], FAST_FOLLOW);
    const denied = await stead.runs.follow(d.id, [wf], FAST_FOLLOW);
    expect(approved.output).toMatchObject({ approved: true, by: "ann", reason: "lgtm" } satisfies Partial<ApprovalDecision>);
    expect(denied.output).toMatchObject({ approved: false, by: "bob", reason: "not yet" } satisfies Partial<ApprovalDecision>);
    expect((await stead.runs.waits(a.id))[0]).toMatchObject({ status: "resolved", resolvedBy: "ann" });
    const types = async (id: string) => (await stead.runs.events({ runId: id })).filter((e) => e.type.startsWith("approval."));
    expect((await types(a.id)).map((e) => [e.type, e.data])).toEqual([["approval.approved", { wait: "ship-it", by: "ann", reason: "lgtm" }]]);
    expect((await types(d.id)).map((e) => [e.type, e.data])).toEqual([["approval.denied", { wait: "ship-it", by: "bob", reason: "not yet" }]]);
  });

  it("a signal delivers its payload", async () => {
    const wf = workflow("signalled", async (ctx) => {
      const p = await ctx.signal<{ n: number; list: string[] }>("go");
      return { got: p };
    });
    const stead = h.create();
    const parked = await stead.run(wf, null, FAST_FOLLOW);
    expect(parked.status).toBe("waiting");
    await stead.runs.signal(parked.id, "go", { n: 7, list: ["a", "b"] }, "carol");
    const done = await stead.runs.follow(parked.id, [wf], FAST_FOLLOW);
    expect(done.output).toEqual({ got: { n: 7, list: ["a", "b"] } });
    expect((await stead.runs.waits(parked.id))[0]).toMatchObject({ kind: "signal", status: "resolved", resolvedBy: "carol" });
  });

  it("ctx.sleep parks the run with no process; the sweeper wakes it when due", async () => {
    const wf = workflow("napper", async (ctx) => {
      await ctx.sleep("nap", "300ms");
      return "rested";
    });
    const stead = h.create();
    const { id } = await stead.runs.start(wf, null);
    const w = h.worker(stead, { definitions: [wf] });
    const outcomes: ExecutionOutcome[] = [];
    w.on("outcome", (runId, o) => runId === id && outcomes.push(o));
    w.start();
    const done = await stead.runs.waitFor(id, { timeoutMs: 10_000 });
    expect(done.output).toBe("rested");
    expect(outcomes.map((o) => o.kind)).toEqual(["waiting", "completed"]);
    const [wait] = await stead.runs.waits(id);
    expect(wait).toMatchObject({ name: "nap", kind: "timer", status: "resolved", resolvedBy: "timer" });
    expect(wait?.resolvedAt).toBeGreaterThanOrEqual(wait?.wakeAt ?? Infinity);
    expect(wait?.wakeAt).toBeGreaterThanOrEqual(done.createdAt + 300);
    const types = (await stead.runs.events({ runId: id })).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(["wait.opened", "run.waiting", "wait.resolved", "run.runnable", "run.completed"]));
    expect(types.filter((t) => t === "run.claimed")).toHaveLength(2);
  });

  it("refuses decisions a run is not waiting for, with STEAD_WAIT_NOT_FOUND, changing nothing", async () => {
    const wf = workflow("wants-signal", async (ctx) => ctx.signal("go"));
    const once = workflow("wants-approval", async (ctx) => ctx.approval("ok"));
    const stead = h.create();
    const parked = await stead.run(wf, null, FAST_FOLLOW);
    const before = await state(stead, parked.id);
    const attempts: [string, () => Promise<unknown>][] = [
      ["approve a signal wait", () => stead.runs.approve(parked.id, "go")],
      ["deny a signal wait", () => stead.runs.deny(parked.id, "go")],
      ["approve an unknown wait", () => stead.runs.approve(parked.id, "nope")],
      ["signal an unknown wait", () => stead.runs.signal(parked.id, "nope", { x: 1 })],
    ];
    for (const [what, attempt] of attempts) {
      const e = await caught(attempt);
      expect(e, what).toBeInstanceOf(SteadError);
      expect((e as SteadError).code, what).toBe("STEAD_WAIT_NOT_FOUND");
      expect((e as SteadError).message, what).toContain('signal "go"');
    }
    expect(await state(stead, parked.id)).toEqual(before);

    const asked = await stead.run(once, null, FAST_FOLLOW);
    await stead.runs.approve(asked.id, "ok", { by: "ann" });
    const afterFirst = await state(stead, asked.id);
    // The same decision again stands as made (by ann); the opposite one is refused, naming it.
    expect(await stead.runs.approve(asked.id, "ok", { by: "bob" })).toMatchObject({ approved: true, by: "ann", already: true });
    const conflicting = (await caught(() => stead.runs.deny(asked.id, "ok"))) as SteadError;
    expect(conflicting.code).toBe("STEAD_INVALID_STATE");
    expect(conflicting.message).toMatch(/"ok" on run .* was already approved by ann at \d{4}-/);
    expect(await state(stead, asked.id)).toEqual(afterFirst);

    const done = await stead.runs.follow(asked.id, [once], FAST_FOLLOW);
    expect(done.status).toBe("completed");
    const afterDone = await state(stead, asked.id);
    expect((await caught(() => stead.runs.signal(asked.id, "ok", 1)) as SteadError).code).toBe("STEAD_WAIT_NOT_FOUND");
    expect(await state(stead, asked.id)).toEqual(afterDone);

    expect((await caught(() => stead.runs.approve("no-such-run", "ok")) as SteadError).code).toBe("STEAD_RUN_NOT_FOUND");
  });
});

describe("following runs", () => {
  it("leaves no listener on the caller's signal after each follow", async () => {
    const stead = h.create();
    const quick = workflow("quick", async (ctx) => ctx.step("one", () => 1));
    const ctl = new AbortController();
    for (let i = 0; i < 12; i++) await stead.run(quick, null, { ...FAST_FOLLOW, signal: ctl.signal });
    expect(getEventListeners(ctl.signal, "abort")).toHaveLength(0);
  });
});
