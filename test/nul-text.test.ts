/**
 * A NUL character is valid in a JavaScript string and in JSON (as \u0000), and a tool that reads a
 * binary file, or a model, can hand one back. Postgres's jsonb refuses it; a value that passes
 * through jsonb on its way to a text column must not make the commit fail.
 */
import { afterEach, describe, expect, it } from "vitest";
import { workflow } from "../src/index.js";
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

describe.each(STORE_KINDS)("text holding a NUL character (%s)", (kind) => {
  it("in who approves and why is taken, and the run goes on", async () => {
    const s = await onStore(kind, "nul-approval");
    open.push(s);
    const { id } = await s.stead.start(approved, null);
    const worker = s.stead.worker({ definitions: [approved] });
    worker.start();
    await s.stead.waitFor(id, { until: (r) => r.status === "waiting", timeoutMs: 20_000 });
    await s.stead.approve(id, "go", { by: NUL, reason: NUL });
    const end = await s.stead.waitFor(id, { timeoutMs: 20_000 });
    await worker.stop();
    expect(end.status).toBe("completed");
    const [wait] = await s.rows("SELECT resolved_by FROM waits WHERE run_id = ?", id);
    expect(wait?.resolved_by).toBe(kind === "postgres" ? "before\uFFFDafter" : NUL);
  });

  it("in a step id fails the run as an invalid definition, on either store, instead of a commit no store takes", async () => {
    const s = await onStore(kind, "nul-id");
    open.push(s);
    const { id } = await s.stead.start(nulId, null);
    const worker = s.stead.worker({ definitions: [nulId] });
    worker.start();
    const end = await s.stead.waitFor(id, { until: (r) => r.status === "failed" || r.status === "completed", timeoutMs: 20_000 });
    await worker.stop();
    expect(end.status).toBe("failed");
    const rows = await s.rows("SELECT step_id FROM steps WHERE run_id = ? ORDER BY seq", id);
    expect(rows.map((r) => r.step_id)).toEqual(["fine"]);
    expect(JSON.stringify(end.error)).toContain("STEAD_INVALID_DEFINITION");
  });

  it("is journaled, reported and read back, and the run ends as it should", async () => {
    const s = await onStore(kind, "nul-text");
    open.push(s);
    const { id } = await s.stead.start(flow, null);
    const worker = s.stead.worker({ definitions: [flow] });
    worker.start();
    const end = await s.stead.waitFor(id, { until: (r) => r.status === "failed" || r.status === "completed", timeoutMs: 20_000 });
    await worker.stop();
    expect(end.status).toBe("failed");
    const steps = await s.stead.journal(id);
    expect(steps.map((x) => x.id)).toEqual(["returns", "fails"]);
    // The journal keeps every character; the error's message is the thrown one, NUL and all.
    expect(steps[0]?.output).toEqual({ text: NUL });
    expect(steps[1]?.error?.message).toBe(NUL);
    const failed = (await s.stead.events({ runId: id })).find((e) => e.type === "step.failed");
    expect(failed, "the failure is reported").toBeDefined();
    // Event data is a report: where the store cannot hold a NUL (Postgres's jsonb) it reads U+FFFD.
    const reported = JSON.stringify(failed?.data);
    expect(reported).toContain(kind === "postgres" ? "before\uFFFDafter" : "before\\u0000after");
  });
});
