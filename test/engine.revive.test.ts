/**
 * Ends that are not final: a cancelled run resumes from its last completed step (and the children
 * its cancellation ended resume with it), a failed run's failed step gets a new attempt after its
 * cause is fixed. Nothing before is run again (asserted from the steps' own side-effect log), both
 * are events with who did it, and what cannot come back is refused with the reason.
 */
import { afterEach, describe, expect, it } from "vitest";
import { SteadError, workflow, type Stead } from "../src/index.js";
import { FAST_FOLLOW, FAST_WORKER, steadHarness } from "./helpers/temp-store.js";
import { caught, deferred, waitUntil } from "./helpers/waiting.js";

const h = steadHarness();
afterEach(() => h.cleanup());

/** What the steps did in the world, in order: `<run> <step>`. */
const log: string[] = [];
afterEach(() => void log.splice(0));
const did = (runId: string, step: string) => log.push(`${runId} ${step}`);

const gates = new Map<string, ReturnType<typeof deferred>>();
/** The gate `name`, made by whichever side reaches it first (the step waiting, or the test opening it). */
const gateOf = (name: string) => {
  let g = gates.get(name);
  if (!g) gates.set(name, (g = deferred()));
  return g;
};
const gate = (name: string) => gateOf(name).promise;
afterEach(() => gates.clear());

const slow = workflow("slow-3", { version: "1" }, async (ctx) => {
  const out: string[] = [];
  for (const s of ["a", "b", "c"]) {
    out.push(
      await ctx.step(s, async () => {
        if (s === "b") await gate(`${ctx.runId} b`);
        did(ctx.runId, s);
        return s;
      }),
    );
  }
  return out;
});

const asks = workflow("asks", { version: "1" }, async (ctx) => {
  await ctx.step("prep", () => did(ctx.runId, "prep"));
  const d = await ctx.approval("ok", { q: "go?" });
  return d.approved;
});

const parent = workflow("parent", { version: "1" }, async (ctx) => {
  await ctx.step("before", () => did(ctx.runId, "before"));
  const kid = await ctx.child("kid", asks, null);
  await ctx.step("after", () => did(ctx.runId, "after"));
  return { kid };
});

let fixed = false;
afterEach(() => void (fixed = false));
const flaky = workflow("flaky", { version: "1" }, async (ctx) => {
  await ctx.step("fetch", () => did(ctx.runId, "fetch"));
  const r = await ctx.step("call", (info) => {
    did(ctx.runId, `call#${info.attempt}`);
    if (!fixed) throw new Error("401: bad provider key");
    return "answered";
  });
  await ctx.step("save", () => did(ctx.runId, "save"));
  return r;
});

async function eventsOf(stead: Stead, runId: string, type: string) {
  return (await stead.runs.events({ runId })).filter((e) => e.type === type);
}

describe("resume a cancelled run", () => {
  it("continues from its last completed step; nothing before it runs again", async () => {
    const stead = h.create();
    const { id } = await stead.runs.start(slow, null);
    const w = h.worker(stead, { definitions: [slow], ...FAST_WORKER, leaseMs: 1500 }).start();
    await waitUntil("step a to be journaled", async () => (await stead.runs.journal(id)).some((st) => st.id === "a" && st.status === "completed"));
    const cancelled = await stead.runs.cancel(id, { by: "ann", reason: "wrong input" });
    expect(cancelled.cancelled).toEqual([id]);
    gateOf(`${id} b`).resolve(undefined);
    await waitUntil("the worker to let the run go", () => w.inFlight === 0);
    expect((await stead.runs.get(id)).status).toBe("cancelled");

    const r = await stead.runs.resume(id, { by: "bob" });
    expect(r).toMatchObject({ from: "cancelled", resumed: [id], already: false });
    const done = await stead.runs.waitFor(id, { timeoutMs: 20_000 });
    expect(done).toMatchObject({ status: "completed", output: ["a", "b", "c"], error: null });
    // b was in flight when the run was cancelled: its outcome was refused, so it ran again; a did not.
    expect(log.filter((l) => l === `${id} a`)).toHaveLength(1);
    expect(log.filter((l) => l === `${id} c`)).toHaveLength(1);
    expect((await eventsOf(stead, id, "run.resumed")).map((e) => e.data)).toEqual([{ from: "cancelled", by: "bob" }]);
    expect((await eventsOf(stead, id, "run.cancelled")).map((e) => e.data)).toMatchObject([{ by: "ann", reason: "wrong input" }]);
  });

  it("a run cancelled while waiting waits again for the same approval once resumed", async () => {
    const stead = h.create();
    const run = await stead.run(asks, null, FAST_FOLLOW);
    expect(run.status).toBe("waiting");
    await stead.runs.cancel(run.id);
    expect((await stead.runs.waits(run.id))[0]?.status).toBe("cancelled");
    await stead.runs.resume(run.id);
    expect((await stead.runs.follow(run.id, [asks], FAST_FOLLOW)).status).toBe("waiting");
    expect((await stead.runs.waits(run.id)).map((w) => [w.name, w.status])).toEqual([["ok", "open"]]);
    await stead.runs.approve(run.id, "ok", { by: "ann" });
    expect((await stead.runs.follow(run.id, [asks], FAST_FOLLOW)).output).toBe(true);
    expect(log.filter((l) => l.endsWith(" prep"))).toHaveLength(1);
  });

  it("the children its cancellation ended resume with it; a cancelled child whose parent moved on is refused", async () => {
    const stead = h.create();
    h.worker(stead, { definitions: [parent, asks], ...FAST_WORKER }).start();
    const kidWaiting = async () => (await stead.runs.list({ definition: "asks", status: ["waiting"] })).runs[0];
    const { id: p } = await stead.runs.start(parent, null);
    const kid = await waitUntil("the child to wait for its approval", kidWaiting);
    await waitUntil("the parent to wait for its child", async () => (await stead.runs.get(p)).status === "waiting");
    const c = await stead.runs.cancel(p, { by: "ann" });
    expect(c.cancelled.sort()).toEqual([p, kid.id].sort());

    // Resuming the child alone is refused: its parent was cancelled with it.
    expect(await caught(() => stead.runs.resume(kid.id))).toMatchObject({ code: "STEAD_INVALID_STATE", message: expect.stringMatching(/parent .* was cancelled with it/) as unknown });
    const r = await stead.runs.resume(p, { by: "bob" });
    expect(r.resumed.sort()).toEqual([p, kid.id].sort());
    await waitUntil("the child to wait again", async () => (await kidWaiting())?.id === kid.id);
    await stead.runs.approve(kid.id, "ok");
    const done = await stead.runs.waitFor(p, { timeoutMs: 20_000 });
    expect(done.output).toEqual({ kid: true });
    expect(log.filter((l) => l === `${p} before`)).toHaveLength(1);
    expect(log.filter((l) => l === `${kid.id} prep`)).toHaveLength(1);
    expect((await eventsOf(stead, kid.id, "run.resumed")).map((e) => e.data)).toEqual([{ from: "cancelled", by: "bob", via: p }]);

    // A child cancelled alone: its parent is told (ctx.child throws) and goes on; the child stays ended.
    const { id: p2 } = await stead.runs.start(parent, null);
    const kid2 = await waitUntil("the second child to wait", async () => (await stead.runs.list({ definition: "asks", status: ["waiting"] })).runs.find((r) => r.parentId === p2));
    await stead.runs.cancel(kid2.id);
    expect((await stead.runs.waitFor(p2, { timeoutMs: 20_000 })).status).toBe("failed");
    const refused = (await caught(() => stead.runs.resume(kid2.id))) as SteadError;
    expect(refused.code).toBe("STEAD_INVALID_STATE");
    expect(refused.message).toMatch(/parent .* was told how it ended and has moved on/);
    expect((await stead.runs.get(kid2.id)).status).toBe("cancelled");
  });
});

describe("retry a failed run", () => {
  it("gives the failed step a new attempt once its cause is fixed; the steps before it do not run again", async () => {
    const stead = h.create();
    const run = await stead.run(flaky, null, FAST_FOLLOW);
    expect(run).toMatchObject({ status: "failed", error: { message: "401: bad provider key", stepId: "call" } });
    fixed = true;
    const r = await stead.runs.retry(run.id, { by: "ann" });
    expect(r).toMatchObject({ stepId: "call", attempt: 2, already: false });
    const done = await stead.runs.follow(run.id, [flaky], FAST_FOLLOW);
    expect(done).toMatchObject({ status: "completed", output: "answered" });
    expect(log).toEqual([`${run.id} fetch`, `${run.id} call#1`, `${run.id} call#2`, `${run.id} save`]);
    expect((await eventsOf(stead, run.id, "run.retried")).map((e) => e.data)).toEqual([{ step: "call", attempt: 2, by: "ann" }]);
    expect((await stead.runs.journal(run.id)).find((s) => s.id === "call")).toMatchObject({ status: "completed", attempt: 2 });
  });

  it("refuses what is not a failed run, and a failed step that later steps ran after", async () => {
    const stead = h.create();
    const ok = await stead.run(asks, null, FAST_FOLLOW);
    expect(await caught(() => stead.runs.retry(ok.id))).toMatchObject({ code: "STEAD_INVALID_STATE", message: expect.stringMatching(/cannot retry run .*: it is waiting/) as unknown });
    const caughtItself = workflow("catches", { version: "1" }, async (ctx) => {
      await ctx
        .step("try", () => {
          throw new Error("first failure");
        })
        .catch(() => undefined);
      await ctx.step("then", () => did(ctx.runId, "then"));
      throw new Error("later");
    });
    const failed = await stead.run(caughtItself, null, FAST_FOLLOW);
    expect(failed.status).toBe("failed");
    const e = (await caught(() => stead.runs.retry(failed.id))) as SteadError;
    expect(e.code).toBe("STEAD_INVALID_STATE");
    expect(e.message).toMatch(/"try" was followed by "then", which ran after the failure/);
    expect((await stead.runs.get(failed.id)).status).toBe("failed");
  });
});

describe("resume right after cancelling a running run", () => {
  const long = workflow("long-step", { version: "1" }, async (ctx) => {
    await ctx.step("work", async (info) => {
      did(ctx.runId, `work start ${info.attempt}`);
      await new Promise((r) => setTimeout(r, 800));
      did(ctx.runId, `work done ${info.attempt}`);
    });
    return "ok";
  });

  it("waits out the lease of the worker that was inside a step, so no second worker starts that step beside it", async () => {
    const stead = h.create();
    const { id } = await stead.runs.start(long, null);
    h.worker(stead, { definitions: [long], ...FAST_WORKER, leaseMs: 1500 }).start();
    await waitUntil("the step to start", () => log.includes(`${id} work start 1`));
    h.worker(stead, { definitions: [long], ...FAST_WORKER, leaseMs: 1500 }).start();
    await stead.runs.cancel(id, { by: "ann" });
    await stead.runs.resume(id, { by: "ann" });
    const done = await stead.runs.waitFor(id, { timeoutMs: 20_000 });
    expect(done.status).toBe("completed");
    // The first execution's step ended (its outcome refused) before any other start of it.
    const firstDone = log.indexOf(`${id} work done 1`);
    const starts = log.map((l, i) => [l, i] as const).filter(([l]) => l.startsWith(`${id} work start`));
    expect(firstDone).toBeGreaterThanOrEqual(0);
    expect(starts.length).toBeGreaterThanOrEqual(2);
    for (const [, i] of starts.slice(1)) expect(i).toBeGreaterThan(firstDone);
  });
});
