import { afterEach, describe, expect, it } from "vitest";
import { StepFailedError, workflow, type ReconcileResult, type Stead, type StepInfo, type StepOptions, type WorkflowDefinition } from "../src/index.js";
import { steadHarness } from "./helpers/temp-store.js";
import { deferred, waitUntil } from "./helpers/waiting.js";

const h = steadHarness();
afterEach(() => h.cleanup());

const LEASE_MS = 300;

type Mode = "hold" | "always" | "reconcile-done" | "reconcile-not-done" | "reconcile-unknown" | "reconcile-throws";

interface Call {
  mode: Mode;
  runId: string;
  attempt: number;
  idempotencyKey: string;
  /** `ctx.idempotencyKey` read inside the step function. */
  ctxKey: string;
}

/**
 * A workflow whose effect step hangs on its first attempt (the worker is then aborted, as if its
 * process died with the effect in flight) and succeeds on later ones.
 */
function effectWorkflow(): { wf: WorkflowDefinition<{ mode: Mode }, unknown>; calls: Call[]; reconciled: StepInfo[] } {
  const calls: Call[] = [];
  const reconciled: StepInfo[] = [];
  const hang = deferred();
  const options = (mode: Mode): StepOptions<unknown> => {
    const reconcile = (verdict: () => ReconcileResult<unknown>) => (info: StepInfo) => {
      reconciled.push(info);
      return verdict();
    };
    switch (mode) {
      case "hold":
        return { effect: true };
      case "always":
        return { effect: true, retry: "always" };
      case "reconcile-done":
        return { effect: true, reconcile: reconcile(() => ({ status: "done", result: "found-by-reconcile" })) };
      case "reconcile-not-done":
        return { effect: true, reconcile: reconcile(() => ({ status: "not-done" })) };
      case "reconcile-unknown":
        return { effect: true, reconcile: reconcile(() => ({ status: "unknown" })) };
      case "reconcile-throws":
        return {
          effect: true,
          reconcile: reconcile(() => {
            throw new Error("provider unreachable");
          }),
        };
    }
  };
  const wf = workflow("charge", async (ctx, input: { mode: Mode }) => {
    try {
      const value = await ctx.step("charge", options(input.mode), async (info) => {
        calls.push({ mode: input.mode, runId: info.runId, attempt: info.attempt, idempotencyKey: info.idempotencyKey, ctxKey: ctx.idempotencyKey });
        if (info.attempt === 1) await hang.promise;
        return `charged on attempt ${info.attempt}`;
      });
      return { ok: true, value };
    } catch (e) {
      const err = e as StepFailedError;
      return { ok: false, isStepFailed: e instanceof StepFailedError, originalCode: err.originalCode, message: err.message };
    }
  });
  return { wf, calls, reconciled };
}

/**
 * Starts one run per mode (ids in the same order) and leaves each with its effect's intent
 * committed and no outcome: the worker that dispatched the effects is aborted without writing.
 */
async function strandIntents(stead: Stead, wf: WorkflowDefinition<{ mode: Mode }, unknown>, modes: Mode[]): Promise<string[]> {
  const ids: string[] = [];
  for (const mode of modes) ids.push((await stead.runs.start(wf, { mode })).id);
  const doomed = h.worker(stead, { definitions: [wf], leaseMs: LEASE_MS }).start();
  await waitUntil("every effect's intent to be committed", async () => {
    for (const id of ids) {
      if (!(await stead.runs.journal(id)).some((s) => s.id === "charge" && s.status === "intent")) return false;
    }
    return true;
  });
  doomed.abortAll();
  return ids;
}

describe("effects whose outcome is unknown", () => {
  it("holds the run ambiguous_effect; release retry / skip / result each do what they promise", async () => {
    const { wf, calls } = effectWorkflow();
    const stead = h.create();
    const ids = await strandIntents(stead, wf, ["hold", "hold", "hold"]);
    const [retried, skipped, supplied] = ids as [string, string, string];

    h.worker(stead, { definitions: [wf], leaseMs: LEASE_MS }).start();
    for (const id of ids) {
      const held = await stead.runs.waitFor(id, { until: (r) => r.status === "held", timeoutMs: 15_000 });
      expect(held.lostClaims).toBe(1);
      const [hold] = await stead.holds.list({ runId: id });
      expect(hold).toMatchObject({ kind: "ambiguous_effect", stepId: "charge" });
      expect(hold?.details).toMatchObject({ step: "charge", attempt: 1, idempotencyKey: `${id}:charge` });
      expect((await stead.runs.journal(id)).find((s) => s.id === "charge")?.status).toBe("intent");
    }
    expect(calls.map((c) => c.attempt)).toEqual([1, 1, 1]);

    await stead.runs.release(retried, "ambiguous_effect", { choice: "retry", by: "ann" });
    const r1 = await stead.runs.waitFor(retried, { timeoutMs: 15_000 });
    expect(r1.output).toEqual({ ok: true, value: "charged on attempt 2" });
    const retriedCalls = calls.filter((c) => c.runId === retried);
    expect(retriedCalls.map((c) => c.attempt)).toEqual([1, 2]);
    expect(new Set(retriedCalls.flatMap((c) => [c.idempotencyKey, c.ctxKey]))).toEqual(new Set([`${retried}:charge`]));
    expect((await stead.runs.journal(retried)).find((s) => s.id === "charge")).toMatchObject({ status: "completed", attempt: 2 });

    await stead.runs.release(skipped, "ambiguous_effect", { choice: "skip" });
    const r2 = await stead.runs.waitFor(skipped, { timeoutMs: 15_000 });
    expect(r2.output).toEqual({ ok: false, isStepFailed: true, originalCode: "STEAD_OUTCOME_UNKNOWN", message: "interrupted: outcome unknown" });
    expect(calls.filter((c) => c.runId === skipped)).toHaveLength(1);

    await stead.runs.release(supplied, "ambiguous_effect", { choice: "result", result: { receipt: "r-123" } });
    const r3 = await stead.runs.waitFor(supplied, { timeoutMs: 15_000 });
    expect(r3.output).toEqual({ ok: true, value: { receipt: "r-123" } });
    expect(calls.filter((c) => c.runId === supplied)).toHaveLength(1);
    expect((await stead.runs.journal(supplied)).find((s) => s.id === "charge")).toMatchObject({ status: "completed", output: { receipt: "r-123" } });
  });

  it('retry: "always" re-runs the effect without a hold; reconcile done / not-done / unknown behave as documented', async () => {
    const { wf, calls, reconciled } = effectWorkflow();
    const stead = h.create();
    const modes: Mode[] = ["always", "reconcile-done", "reconcile-not-done", "reconcile-unknown", "reconcile-throws"];
    const ids = await strandIntents(stead, wf, modes);
    h.worker(stead, { definitions: [wf], leaseMs: LEASE_MS }).start();
    const id = (m: Mode) => ids[modes.indexOf(m)] ?? "";

    const always = await stead.runs.waitFor(id("always"), { timeoutMs: 15_000 });
    expect(always.output).toEqual({ ok: true, value: "charged on attempt 2" });
    expect(await stead.holds.list({ runId: id("always"), open: false })).toEqual([]);

    // done: the recorded outcome is what reconcile found; the effect is not run again.
    const done = await stead.runs.waitFor(id("reconcile-done"), { timeoutMs: 15_000 });
    expect(done.output).toEqual({ ok: true, value: "found-by-reconcile" });
    expect(calls.filter((c) => c.mode === "reconcile-done").map((c) => c.attempt)).toEqual([1]);
    expect((await stead.runs.journal(id("reconcile-done"))).find((s) => s.id === "charge")).toMatchObject({ status: "completed", attempt: 1, output: "found-by-reconcile" });

    // not-done: the effect runs again as a new attempt.
    const notDone = await stead.runs.waitFor(id("reconcile-not-done"), { timeoutMs: 15_000 });
    expect(notDone.output).toEqual({ ok: true, value: "charged on attempt 2" });
    expect(calls.filter((c) => c.mode === "reconcile-not-done").map((c) => c.attempt)).toEqual([1, 2]);

    // unknown (or reconcile itself failing): a person decides.
    for (const m of ["reconcile-unknown", "reconcile-throws"] as const) {
      await stead.runs.waitFor(id(m), { until: (r) => r.status === "held", timeoutMs: 15_000 });
      const [hold] = await stead.holds.list({ runId: id(m) });
      expect(hold?.kind).toBe("ambiguous_effect");
      expect(calls.filter((c) => c.mode === m).map((c) => c.attempt)).toEqual([1]);
    }
    expect((await stead.holds.list({ runId: id("reconcile-throws") }))[0]?.reason).toContain("provider unreachable");

    // reconcile is asked about the interrupted attempt, with the step's stable idempotency key.
    expect(reconciled.map((r) => [r.runId, r.attempt, r.idempotencyKey]).sort()).toEqual(
      (["reconcile-done", "reconcile-not-done", "reconcile-unknown", "reconcile-throws"] as const).map((m) => [id(m), 1, `${id(m)}:charge`]).sort(),
    );
  });
});
