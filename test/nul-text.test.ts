/**
 * A NUL character is valid in a JavaScript string and in JSON (as \u0000), and a tool that reads a
 * binary file, or a model, can hand one back. Postgres holds none (not in jsonb, not in text): a
 * value holding one must not make a commit fail, and so stall a run or refuse a command.
 */
import { afterEach, describe, expect, it } from "vitest";
import { workflow, type RunInfo, type WorkflowDefinition } from "../src/index.js";
import { onStore, STORE_KINDS, type OnStore } from "./helpers/both-stores.js";

const open: OnStore[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.cleanup();
});

const NUL = "before\u0000after";

const flow = workflow("nul-text", async (ctx) => {
  const out = await ctx.step("returns", () => ({ text: NUL }));
  await ctx.step("fails", () => {
    throw new Error(NUL);
  });
  return out;
});

const nulId = workflow("nul-step-id", async (ctx) => {
  await ctx.step("fine", () => 1);
  await ctx.step(`bad${"\u0000"}id`, () => 2);
});

const approved = workflow("nul-approval", async (ctx) => {
  await ctx.approval("go");
  return "done";
});

const ended = (r: RunInfo) => r.status === "failed" || r.status === "completed";

/** A run of `flow` on a worker of its own store, until `until` (after `meanwhile`, if given). */
async function runOn(s: OnStore, flow: WorkflowDefinition<null, unknown>, until: (r: RunInfo) => boolean, meanwhile?: (id: string) => Promise<void>): Promise<RunInfo> {
  const { id } = await s.stead.runs.start(flow, null);
  const worker = s.stead.worker({ definitions: [flow] });
  worker.start();
  try {
    if (meanwhile) {
      await s.stead.runs.waitFor(id, { until: (r) => r.status === "waiting", timeoutMs: 20_000 });
      await meanwhile(id);
    }
    return await s.stead.runs.waitFor(id, { until, timeoutMs: 20_000 });
  } finally {
    await worker.stop();
  }
}

describe.each(STORE_KINDS)("text holding a NUL character (%s)", (kind) => {
  it("in who approves and why is taken, and the run goes on", async () => {
    const s = await onStore(kind, "nul-approval");
    open.push(s);
    const end = await runOn(s, approved, ended, async (id) => {
      await s.stead.runs.approve(id, "go", { by: NUL, reason: NUL });
    });
    expect(end.status).toBe("completed");
    const [wait] = await s.rows("SELECT resolved_by FROM waits WHERE run_id = ?", end.id);
    expect(wait?.resolved_by).toBe(kind === "postgres" ? "before\uFFFDafter" : NUL);
  });

  it("in a step id fails the run as an invalid definition, on either store, instead of a commit no store takes", async () => {
    const s = await onStore(kind, "nul-id");
    open.push(s);
    const end = await runOn(s, nulId, ended);
    expect(end.status).toBe("failed");
    const rows = await s.rows("SELECT step_id FROM steps WHERE run_id = ? ORDER BY seq", end.id);
    expect(rows.map((r) => r.step_id)).toEqual(["fine"]);
    expect(JSON.stringify(end.error)).toContain("STEAD_INVALID_DEFINITION");
  });

  it("is journaled, reported and read back, and the run ends as it should", async () => {
    const s = await onStore(kind, "nul-text");
    open.push(s);
    const end = await runOn(s, flow, ended);
    expect(end.status).toBe("failed");
    const steps = await s.stead.runs.journal(end.id);
    expect(steps.map((x) => x.id)).toEqual(["returns", "fails"]);
    // The journal keeps every character; the error's message is the thrown one, NUL and all.
    expect(steps[0]?.output).toEqual({ text: NUL });
    expect(steps[1]?.error?.message).toBe(NUL);
    const failed = (await s.stead.runs.events({ runId: end.id })).find((e) => e.type === "step.failed");
    expect(failed, "the failure is reported").toBeDefined();
    // Event data is a report: where the store cannot hold a NUL (Postgres's jsonb) it reads U+FFFD.
    const reported = JSON.stringify(failed?.data);
    expect(reported).toContain(kind === "postgres" ? "before\uFFFDafter" : "before\\u0000after");
  });
});
