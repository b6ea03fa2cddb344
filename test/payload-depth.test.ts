/**
 * Deeply nested payloads: every value Stead stores (a run's input and output, a step's result, an
 * approval's request, a signal's payload, a released step's result, a child's input) is refused
 * past 512 levels of nesting with STEAD_PAYLOAD_TOO_DEEP, at any depth without overflowing the
 * stack, and nothing of it is written. A step's too-deep result is that step's failure.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { workflow, type Stead, type Worker } from "../src/index.js";
import { cli, dumpStore, FIXTURES, lines, requireBuild, tempDir } from "./cli-helpers.js";
import { onStore, STORE_KINDS, type OnStore } from "./helpers/both-stores.js";
import { caught, deferred, waitUntil } from "./helpers/waiting.js";

const FIRST_START = join(FIXTURES, "first-start.ts");
const WAITS_SIGNAL = join(FIXTURES, "waits-signal.ts");

/** The documented limit (docs/guides/workflows.md, "What `ctx` offers"). */
const MAX_DEPTH = 512;

/** An array nested `levels` deep: `[]` is one level, `[[]]` two. Built without recursion. */
function nested(levels: number): unknown[] {
  let v: unknown[] = [];
  for (let i = 1; i < levels; i++) v = [v];
  return v;
}

/** The same as JSON text, built as text (JSON.stringify itself overflows on deep values). */
function nestedJson(levels: number): string {
  return "[".repeat(levels) + "]".repeat(levels);
}

const deepStep = workflow("depth-step", async (ctx, levels: number) => {
  await ctx.step("before", () => "ok");
  const v = await ctx.step("deep", () => nested(levels));
  return { levels: JSON.stringify(v).length / 2 };
});

const deepOutput = workflow("depth-output", (_ctx, levels: number) => nested(levels));

const deepApproval = workflow("depth-approval", async (ctx, levels: number) => {
  await ctx.step("before", () => "ok");
  return ctx.approval("ask", nested(levels));
});

const kid = workflow("depth-kid", (_ctx, input: unknown) => input);
const deepChild = workflow("depth-child", async (ctx, levels: number) => {
  await ctx.step("before", () => "ok");
  return ctx.child("kid", kid, nested(levels));
});

const waitsForSignal = workflow("depth-signal", async (ctx) => ctx.signal("go"));

const gate = deferred();
const effect = workflow("depth-effect", async (ctx) =>
  ctx.step("charge", { effect: true }, async (info) => {
    if (info.attempt === 1) await gate.promise;
    return "charged";
  }),
);

const FOLLOW = { pollMs: 20, graceMs: 500 } as const;

interface ErrorJson {
  code?: string;
  message?: string;
}
const parsed = (text: unknown): ErrorJson => (typeof text === "string" ? (JSON.parse(text) as ErrorJson) : {});

describe.each(STORE_KINDS)("on %s", (kind) => {
  let s: OnStore;
  let stead: Stead;
  const workers: Worker[] = [];
  const open = async () => {
    s = await onStore(kind, "payload-depth");
    stead = s.stead;
  };
  afterEach(async () => {
    for (const w of workers.splice(0)) w.abortAll();
    await s.cleanup();
  });

  it.each([20_000, 1_000_000])("a step returning a %i-deep array is journaled as that step's failure, and the run fails with it", async (levels) => {
    await open();
    const r = await stead.run(deepStep, levels, FOLLOW);
    expect(r.status).toBe("failed");
    const steps = await s.rows("SELECT step_id, status, output, error FROM steps WHERE run_id = ? ORDER BY seq", r.id);
    expect(steps.map((x) => [x.step_id, x.status])).toEqual([
      ["before", "completed"],
      ["deep", "failed"],
    ]);
    expect(steps[1]?.output).toBeNull();
    const stepError = parsed(steps[1]?.error);
    expect(stepError.code).toBe("STEAD_PAYLOAD_TOO_DEEP");
    expect(stepError.message).toContain('step "deep"');
    expect(stepError.message).toContain(`${MAX_DEPTH} levels`);
    const [run] = await s.rows("SELECT status, error FROM runs WHERE id = ?", r.id);
    expect(run?.status).toBe("failed");
    expect(parsed(run?.error).code).toBe("STEAD_PAYLOAD_TOO_DEEP");
  });

  it(`accepts ${MAX_DEPTH} levels and refuses ${MAX_DEPTH + 1}, as a step result and as a run's output`, async () => {
    await open();
    const ok = await stead.run(deepStep, MAX_DEPTH, FOLLOW);
    expect(ok.status).toBe("completed");
    const [kept] = await s.rows("SELECT output FROM steps WHERE run_id = ? AND step_id = 'deep'", ok.id);
    expect(kept?.output).toBe(nestedJson(MAX_DEPTH));
    const over = await stead.run(deepStep, MAX_DEPTH + 1, FOLLOW);
    expect(over.status).toBe("failed");
    const [failed] = await s.rows("SELECT status, error FROM steps WHERE run_id = ? AND step_id = 'deep'", over.id);
    expect(failed?.status).toBe("failed");
    expect(parsed(failed?.error).code).toBe("STEAD_PAYLOAD_TOO_DEEP");

    const out = await stead.run(deepOutput, 50_000, FOLLOW);
    const [run] = await s.rows("SELECT status, output, error FROM runs WHERE id = ?", out.id);
    expect(run?.status).toBe("failed");
    expect(run?.output).toBeNull();
    expect(parsed(run?.error).code).toBe("STEAD_PAYLOAD_TOO_DEEP");
  });

  it("refuses a too-deep input at start, and writes no run", async () => {
    await open();
    const e = (await caught(() => stead.runs.start(kid, nested(60_000), { id: "deep-input" }))) as ErrorJson;
    expect(e.code).toBe("STEAD_PAYLOAD_TOO_DEEP");
    expect(e.message).toContain(`${MAX_DEPTH} levels`);
    expect(await s.rows("SELECT id FROM runs")).toEqual([]);
  });

  it("an approval request or a child input too deep fails the run with the error, and writes no wait and no child", async () => {
    await open();
    const a = await stead.run(deepApproval, 30_000, FOLLOW);
    const c = await stead.run(deepChild, 30_000, { ...FOLLOW, definitions: [kid] });
    for (const r of [a, c]) {
      const [run] = await s.rows("SELECT status, error FROM runs WHERE id = ?", r.id);
      expect(run?.status).toBe("failed");
      expect(parsed(run?.error).code).toBe("STEAD_PAYLOAD_TOO_DEEP");
    }
    expect(await s.rows("SELECT run_id FROM waits")).toEqual([]);
    expect((await s.rows("SELECT definition FROM runs ORDER BY definition")).map((x) => x.definition)).toEqual(["depth-approval", "depth-child"]);
  });

  it("refuses a too-deep signal payload and a too-deep released result, and changes nothing", async () => {
    await open();
    const waiting = await stead.run(waitsForSignal, null, FOLLOW);
    expect(waiting.status).toBe("waiting");
    const before = await s.rows("SELECT name, status, result FROM waits WHERE run_id = ?", waiting.id);
    const e1 = (await caught(() => stead.runs.signal(waiting.id, "go", nested(40_000)))) as ErrorJson;
    expect(e1.code).toBe("STEAD_PAYLOAD_TOO_DEEP");
    expect(await s.rows("SELECT name, status, result FROM waits WHERE run_id = ?", waiting.id)).toEqual(before);

    const { id } = await stead.runs.start(effect, null);
    const doomed = stead.worker({ definitions: [effect], leaseMs: 300, pollMs: 20, graceMs: 100 });
    workers.push(doomed);
    doomed.on("error", () => undefined);
    doomed.start();
    await waitUntil("the effect's intent", async () => (await s.rows("SELECT status FROM steps WHERE run_id = ?", id)).some((x) => x.status === "intent"));
    doomed.abortAll();
    const next = stead.worker({ definitions: [effect], leaseMs: 300, pollMs: 20, graceMs: 100 });
    workers.push(next);
    next.on("error", () => undefined);
    next.start();
    await stead.runs.waitFor(id, { until: (r) => r.status === "held", timeoutMs: 15_000 });
    const held = { steps: await s.rows("SELECT step_id, status, output FROM steps WHERE run_id = ?", id), holds: await s.rows("SELECT kind, released_at FROM holds WHERE run_id = ?", id) };
    const e2 = (await caught(() => stead.runs.release(id, "ambiguous_effect", { choice: "result", result: nested(40_000) }))) as ErrorJson;
    expect(e2.code).toBe("STEAD_PAYLOAD_TOO_DEEP");
    expect({ steps: await s.rows("SELECT step_id, status, output FROM steps WHERE run_id = ?", id), holds: await s.rows("SELECT kind, released_at FROM holds WHERE run_id = ?", id) }).toEqual(held);
  });
});

describe("the CLI", () => {
  beforeAll(() => requireBuild());

  it("refuses a 60,000-deep --input with exit 2 and one line naming the limit, and creates no store", async () => {
    const dir = tempDir("stead-depth-");
    const r = await cli(["run", FIRST_START, "--input", nestedJson(60_000)], dir);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toMatch(/^stead: --input is nested more than 512 levels deep/);
    expect(r.stderr).not.toContain("internal error");
    expect(existsSync(join(dir, ".stead"))).toBe(false);
    const ok = await cli(["run", FIRST_START, "--input", nestedJson(MAX_DEPTH)], dir);
    expect({ code: ok.code, stderr: ok.stderr }).toEqual({ code: 0, stderr: "" });
  });

  it("refuses a too-deep signal payload with exit 2 and leaves the store as it was", async () => {
    const dir = tempDir("stead-depth-");
    const store = join(dir, "stead.db");
    const r = await cli(["run", WAITS_SIGNAL, "--store", store, "--id", "r1"], dir);
    expect(r.code).toBe(3);
    const before = dumpStore(store);
    const sig = await cli(["signal", "r1", "go", nestedJson(5_000), "--store", store], dir);
    expect(sig.code).toBe(2);
    expect(sig.stderr).toMatch(/^stead: the signal payload is nested more than 512 levels deep/);
    expect(dumpStore(store)).toEqual(before);
  });
});
