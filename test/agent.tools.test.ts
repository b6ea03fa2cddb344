/**
 * Tool calls: bad calls the model makes, tool errors, intents, and calls cut off by a dead process
 * (a hanging tool whose worker is aborted without writing, then a new worker), with the model
 * always getting a well-formed result.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { agent, tool, type AgentDefinition, type ReconcileResult, type Recovery, type Stead, type ToolCallInfo } from "../src/index.js";
import { FAST_FOLLOW } from "./helpers/temp-store.js";
import { providerModel, reply, type ProviderServer, type RecordedRequest } from "./helpers/provider-server.js";
import { deferred, waitUntil } from "./helpers/waiting.js";
import {
  CUT_LEASE_MS,
  FAST_RETRY,
  agentTestKit,
  cutWhen,
  eventsOf,
  firstUser,
  hasStep,
  hasToolResults,
  journalShape,
  toolResult,
  toolResultsOf,
  transcriptProblems,
} from "./fixtures/agents/kit.js";

const { h, server } = agentTestKit();

const add = (calls: unknown[] = []) =>
  tool({
    input: z.object({ a: z.number(), b: z.number() }),
    idempotent: true,
    run: (i) => {
      calls.push(i);
      return i.a + i.b;
    },
  });

/** Answers with `calls` first, then (once the transcript holds tool results) with a final text. */
function callsThenText(calls: Parameters<typeof reply.toolCalls>[0], text = "done") {
  return (req: RecordedRequest) => (hasToolResults(req) ? reply.text(text) : reply.toolCalls(calls));
}

describe("calls the model gets wrong", () => {
  it("unknown tool, arguments that are not JSON, arguments failing the schema: the model gets an error result and the run goes on", async () => {
    const s = await server(
      callsThenText([
        { id: "c1", name: "subtract", args: { a: 1, b: 2 } },
        { id: "c2", name: "add", rawArguments: '{"a": 1, "b": ' },
        { id: "c3", name: "add", args: { a: "one", b: 2 } },
        { id: "c4", name: "add", args: { a: 2, b: 3 } },
      ]),
    );
    const calls: unknown[] = [];
    const calc = agent("calc", { model: providerModel(s.url), tools: { add: add(calls) }, retry: FAST_RETRY });
    const stead = h.create();
    const run = await stead.run(calc, "add things", FAST_FOLLOW);

    expect(run.status).toBe("completed");
    expect(calls).toEqual([{ a: 2, b: 3 }]);
    expect(s.requests).toHaveLength(2);
    const r2 = s.requests[1];
    expect(transcriptProblems(r2?.messages ?? [])).toEqual([]);
    expect(toolResultsOf(r2).map(([id]) => id)).toEqual(["c1", "c2", "c3", "c4"]);
    expect(toolResult(r2, "c1")).toBe('unknown tool "subtract"; the tools are: add');
    expect(toolResult(r2, "c2")).toMatch(/^the arguments of add are not valid JSON \(.+\); send a JSON object matching its schema$/);
    expect(toolResult(r2, "c3")).toMatch(/^invalid arguments for add: .*expected number/is);
    expect(toolResult(r2, "c4")).toBe("5");
    // No step, no hold for the bad calls: only the good one is journaled.
    expect(await journalShape(stead, run.id)).toEqual([
      ["model-1", "model", "completed"],
      ["tool:c4", "tool", "completed"],
      ["model-2", "model", "completed"],
    ]);
    expect(await stead.holds.list({ runId: run.id, open: false })).toEqual([]);
  });

  it("a tool that throws: the model gets its error as the result and the run goes on", async () => {
    const s = await server(callsThenText([{ id: "c1", name: "fetch", args: { url: "https://example.invalid" } }], "could not fetch"));
    const fetcher = agent("fetcher", {
      model: providerModel(s.url),
      retry: FAST_RETRY,
      tools: {
        fetch: tool({
          input: z.object({ url: z.string() }),
          run: () => {
            throw new Error("getaddrinfo ENOTFOUND example.invalid");
          },
        }),
      },
    });
    const stead = h.create();
    const run = await stead.run(fetcher, "fetch it", FAST_FOLLOW);
    expect(run.status).toBe("completed");
    expect((run.output as { text: string }).text).toBe("could not fetch");
    expect(toolResult(s.requests[1], "c1")).toBe("getaddrinfo ENOTFOUND example.invalid");
    expect(await journalShape(stead, run.id)).toEqual([
      ["model-1", "model", "completed"],
      ["tool:c1", "tool", "completed"],
      ["model-2", "model", "completed"],
    ]);
  });

  it("a tool error the tool marks fatal fails the run; one it does not mark goes back to the model", async () => {
    const s = await server((req) => {
      if (hasToolResults(req)) return reply.text("noted");
      return reply.toolCalls([{ id: "c1", name: "disk", args: { what: firstUser(req) } }]);
    });
    const disk = agent("disk", {
      model: providerModel(s.url),
      retry: FAST_RETRY,
      tools: {
        disk: tool({
          input: z.object({ what: z.string() }),
          fatal: (e) => e instanceof Error && e.message.startsWith("disk full"),
          run: ({ what }) => {
            throw new Error(what);
          },
        }),
      },
    });
    const stead = h.create();
    const fatal = await stead.run(disk, "disk full: 0 bytes left", FAST_FOLLOW);
    expect(fatal.status).toBe("failed");
    expect(fatal.error?.message).toContain("disk full: 0 bytes left");
    expect(await journalShape(stead, fatal.id)).toEqual([
      ["model-1", "model", "completed"],
      ["tool:c1", "tool", "failed"],
    ]);
    expect(s.requests).toHaveLength(1);

    const mild = await stead.run(disk, "permission denied", FAST_FOLLOW);
    expect(mild.status).toBe("completed");
    expect(toolResult(s.requests[2], "c1")).toBe("permission denied");

    const always = agent("disk", { ...disk.config, tools: { disk: tool({ input: z.object({ what: z.string() }), fatal: true, run: () => Promise.reject(new Error("any")) }) } });
    const run3 = await stead.run(always, "whatever", FAST_FOLLOW);
    expect(run3.status).toBe("failed");
    expect(run3.error?.message).toContain("any");
  });
});

describe("provider quirks and sizes", () => {
  it("a provider that repeats tool-call ids across responses: each call gets its own step and key, the model gets each result", async () => {
    const s = await server([
      reply.toolCalls([{ id: "call_0", name: "add", args: { a: 1, b: 1 } }]),
      reply.toolCalls([{ id: "call_0", name: "add", args: { a: 2, b: 2 } }]),
      reply.text("4"),
    ]);
    const calls: unknown[] = [];
    const calc = agent("calc", { model: providerModel(s.url), tools: { add: add(calls) }, retry: FAST_RETRY });
    const stead = h.create();
    const run = await stead.run(calc, "add twice", FAST_FOLLOW);
    expect(run.status).toBe("completed");
    expect(calls).toEqual([
      { a: 1, b: 1 },
      { a: 2, b: 2 },
    ]);
    expect(await journalShape(stead, run.id)).toEqual([
      ["model-1", "model", "completed"],
      ["tool:call_0", "tool", "completed"],
      ["model-2", "model", "completed"],
      ["tool:call_0@2", "tool", "completed"],
      ["model-3", "model", "completed"],
    ]);
    const last = s.requests[2];
    expect(transcriptProblems(last?.messages ?? [])).toEqual([]);
    expect(toolResultsOf(last)).toEqual([
      ["call_0", "2"],
      ["call_0", "4"],
    ]);
  });

  it("a tool result over the payload ceiling goes back to the model as an error; the run goes on", async () => {
    const s = await server(callsThenText([{ id: "c1", name: "dump", args: {} }], "too big, fine"));
    const dumper = agent("dumper", { model: providerModel(s.url), retry: FAST_RETRY, tools: { dump: tool({ input: z.object({}), idempotent: true, run: () => "x".repeat(5_000) }) } });
    const stead = h.create({ payloadLimitBytes: 2_000 });
    const run = await stead.run(dumper, "dump it", FAST_FOLLOW);
    expect(run.status).toBe("completed");
    expect(toolResult(s.requests[1], "c1")).toMatch(/^the result of dump is 5002 bytes, over the 2000-byte ceiling/);
  });
});

describe("intents", () => {
  it("a non-idempotent tool commits an intent before it runs; an idempotent one does not; both are tool steps keyed by the call id", async () => {
    const s = await server(
      callsThenText([
        { id: "c1", name: "read", args: {} },
        { id: "c2", name: "write", args: {} },
      ]),
    );
    const keys: Record<string, string> = {};
    const intentsSeen: Record<string, boolean> = {};
    const stead = h.create();
    const probe = (name: string) =>
      tool({
        input: z.object({}),
        idempotent: name === "read",
        run: async (_i, ctx) => {
          keys[name] = ctx.idempotencyKey;
          // What the store holds while the tool runs.
          intentsSeen[name] = (await stead.store.journal(ctx.runId)).some((r) => r.stepId === `tool:${ctx.toolCallId}` && r.status === "intent");
          return name;
        },
      });
    const io = agent("io", { model: providerModel(s.url), retry: FAST_RETRY, tools: { read: probe("read"), write: probe("write") } });
    const run = await stead.run(io, "go", FAST_FOLLOW);
    expect(run.status).toBe("completed");
    expect(intentsSeen).toEqual({ read: false, write: true });
    expect(keys).toEqual({ read: `${run.id}:tool:c1`, write: `${run.id}:tool:c2` });
    const intents = (await eventsOf(stead, run.id, "step.intent")).map((e) => e.data.step);
    expect(intents).toEqual(["model-1", "tool:c2", "model-2"]);
    expect((await eventsOf(stead, run.id, "step.intent")).find((e) => e.data.step === "tool:c2")?.data.idempotencyKey).toBe(`${run.id}:tool:c2`);
    expect(await journalShape(stead, run.id)).toEqual([
      ["model-1", "model", "completed"],
      ["tool:c1", "tool", "completed"],
      ["tool:c2", "tool", "completed"],
      ["model-2", "model", "completed"],
    ]);
  });
});

interface ToolRun {
  attempt: number;
  key: string;
  recovery: Recovery;
}

/**
 * An agent whose `charge` tool hangs on its first attempt in every run (its worker is then
 * aborted, as if the process died between the intent and the outcome) and succeeds later.
 */
function chargeAgent(s: ProviderServer, options: { idempotent?: boolean; reconcile?: (call: ToolCallInfo<{ amount: number }>, key: string) => ReconcileResult<unknown> } = {}) {
  const runs: ToolRun[] = [];
  const reconciled: { call: ToolCallInfo<{ amount: number }>; key: string; attempt: number }[] = [];
  const hang = deferred();
  const reconcile = options.reconcile;
  const def: AgentDefinition = agent("charger", {
    model: providerModel(s.url),
    retry: FAST_RETRY,
    tools: {
      charge: tool({
        input: z.object({ amount: z.number() }),
        ...(options.idempotent ? { idempotent: true } : {}),
        ...(reconcile
          ? {
              reconcile: (call: ToolCallInfo<{ amount: number }>, ctx: { idempotencyKey: string; attempt: number }) => {
                reconciled.push({ call, key: ctx.idempotencyKey, attempt: ctx.attempt });
                return reconcile(call, ctx.idempotencyKey);
              },
            }
          : {}),
        run: async ({ amount }, ctx) => {
          runs.push({ attempt: ctx.attempt, key: ctx.idempotencyKey, recovery: ctx.recovery });
          if (runs.filter((r) => r.key === ctx.idempotencyKey).length === 1) await hang.promise;
          return { charged: amount, attempt: ctx.attempt };
        },
      }),
    },
  });
  return { def, runs: (runId: string) => runs.filter((r) => r.key.startsWith(`${runId}:`)), reconciled };
}

const chargeScript = () => callsThenText([{ id: "c1", name: "charge", args: { amount: 5 } }], "finished");

/** The model request of run `prompt` that carries the tool results. */
function continuation(s: ProviderServer, prompt: string): RecordedRequest | undefined {
  return s.requests.find((r) => firstUser(r) === prompt && hasToolResults(r));
}

/** Starts one run per prompt and cuts them all (one worker aborted) once each has the intent of its tool call committed. */
async function cutAfterIntent(stead: Stead, def: AgentDefinition, ...prompts: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const p of prompts) ids.push((await stead.runs.start(def, p)).id);
  const doomed = h.worker(stead, { definitions: [def], leaseMs: CUT_LEASE_MS }).start();
  await waitUntil("every run's tool intent", async () => {
    for (const id of ids) if (!hasStep("tool:c1", "intent")(await stead.store.journal(id))) return false;
    return true;
  });
  doomed.abortAll();
  return ids;
}

describe("a tool call cut off by a dead process", () => {
  it("non-idempotent, no reconcile: held ambiguous_effect; the model response is not requested again", async () => {
    const s = await server(chargeScript());
    const { def, runs } = chargeAgent(s);
    const stead = h.create();
    const [id = ""] = await cutAfterIntent(stead, def, "pay");
    h.worker(stead, { definitions: [def], leaseMs: CUT_LEASE_MS }).start();
    const held = await stead.runs.waitFor(id, { until: (r) => r.status === "held", timeoutMs: 20_000 });
    expect(held.lostClaims).toBe(1);
    const [hold] = await stead.holds.list({ runId: id });
    expect(hold).toMatchObject({ kind: "ambiguous_effect", stepId: "tool:c1", details: { step: "tool:c1", attempt: 1, idempotencyKey: `${id}:tool:c1` } });
    expect(runs(id).map((r) => r.attempt)).toEqual([1]);
    expect(s.requests).toHaveLength(1);
    expect((await stead.runs.why(id)).waysOut.filter((w) => w.verb === "release").map(({ runId, args, supply }) => ({ runId, args, supply }))).toEqual([
      { runId: id, args: { hold: "ambiguous_effect", choice: "retry" }, supply: [] },
      { runId: id, args: { hold: "ambiguous_effect", choice: "skip" }, supply: [] },
      { runId: id, args: { hold: "ambiguous_effect", choice: "result" }, supply: ["result"] },
    ]);
  });

  it("release skip / result / retry: the model gets 'interrupted: outcome unknown', the supplied result, or the new attempt's result", async () => {
    const s = await server(chargeScript());
    const { def, runs } = chargeAgent(s);
    const stead = h.create();
    const [skipped, supplied, retried] = (await cutAfterIntent(stead, def, "skip-me", "supply-me", "retry-me")) as [string, string, string];
    h.worker(stead, { definitions: [def], leaseMs: CUT_LEASE_MS }).start();
    for (const id of [skipped, supplied, retried]) await stead.runs.waitFor(id, { until: (r) => r.status === "held", timeoutMs: 20_000 });

    await stead.runs.release(skipped, "ambiguous_effect", { choice: "skip", by: "ann" });
    await stead.runs.release(supplied, "ambiguous_effect", { choice: "result", result: { charged: 5, receipt: "r-77" }, by: "ann" });
    await stead.runs.release(retried, "ambiguous_effect", { choice: "retry", by: "ann" });
    for (const id of [skipped, supplied, retried]) expect((await stead.runs.waitFor(id, { timeoutMs: 20_000 })).status).toBe("completed");

    expect(toolResult(continuation(s, "skip-me"), "c1")).toBe("interrupted: outcome unknown");
    expect(runs(skipped)).toHaveLength(1);

    expect(toolResult(continuation(s, "supply-me"), "c1")).toBe('{"charged":5,"receipt":"r-77"}');
    expect(runs(supplied)).toHaveLength(1);

    expect(toolResult(continuation(s, "retry-me"), "c1")).toBe('{"charged":5,"attempt":2}');
    const again = runs(retried);
    expect(again.map((r) => r.attempt)).toEqual([1, 2]);
    // The same key on both attempts: the outside world can de-duplicate on it.
    expect(new Set(again.map((r) => r.key))).toEqual(new Set([`${retried}:tool:c1`]));
    expect(again[1]?.recovery).toEqual({ kind: "resumed", reason: "continued" });

    for (const r of s.requests) expect(transcriptProblems(r.messages)).toEqual([]);
    // One model request per model step: the first response of each run was never asked for twice.
    expect(s.requests.filter((r) => !hasToolResults(r))).toHaveLength(3);
  });

  it("idempotent: runs again after the cut, no hold", async () => {
    const s = await server(chargeScript());
    const { def, runs } = chargeAgent(s, { idempotent: true });
    const stead = h.create();
    const { id } = await stead.runs.start(def, "pay");
    await cutWhen(h, stead, def, id, () => runs(id).length === 1);
    h.worker(stead, { definitions: [def], leaseMs: CUT_LEASE_MS }).start();
    const run = await stead.runs.waitFor(id, { timeoutMs: 20_000 });
    expect(run.status).toBe("completed");
    expect(runs(id).map((r) => r.recovery)).toEqual([{ kind: "initial" }, { kind: "resumed", reason: "crash" }]);
    expect(await stead.holds.list({ runId: id, open: false })).toEqual([]);
    expect(toolResult(continuation(s, "pay"), "c1")).toBe('{"charged":5,"attempt":1}');
    expect(s.requests).toHaveLength(2);
  });

  it("reconcile done: its result goes to the model and the tool does not run again", async () => {
    const s = await server(chargeScript());
    const { def, runs, reconciled } = chargeAgent(s, { reconcile: () => ({ status: "done", result: { charged: 5, found: "by reconcile" } }) });
    const stead = h.create();
    const [id = ""] = await cutAfterIntent(stead, def, "pay");
    h.worker(stead, { definitions: [def], leaseMs: CUT_LEASE_MS }).start();
    expect((await stead.runs.waitFor(id, { timeoutMs: 20_000 })).status).toBe("completed");
    expect(runs(id)).toHaveLength(1);
    expect(reconciled).toEqual([{ call: { toolName: "charge", toolCallId: "c1", input: { amount: 5 } }, key: `${id}:tool:c1`, attempt: 1 }]);
    expect(toolResult(continuation(s, "pay"), "c1")).toBe('{"charged":5,"found":"by reconcile"}');
    expect((await eventsOf(stead, id, "effect.reconciled")).map((e) => e.data)).toEqual([{ step: "tool:c1", seq: 1, outcome: "done" }]);
  });

  it("reconcile not-done: the tool runs again as attempt 2 with the same key", async () => {
    const s = await server(chargeScript());
    const { def, runs } = chargeAgent(s, { reconcile: () => ({ status: "not-done" }) });
    const stead = h.create();
    const [id = ""] = await cutAfterIntent(stead, def, "pay");
    h.worker(stead, { definitions: [def], leaseMs: CUT_LEASE_MS }).start();
    expect((await stead.runs.waitFor(id, { timeoutMs: 20_000 })).status).toBe("completed");
    expect(runs(id).map((r) => [r.attempt, r.key])).toEqual([
      [1, `${id}:tool:c1`],
      [2, `${id}:tool:c1`],
    ]);
    expect(runs(id)[1]?.recovery).toEqual({ kind: "resumed", reason: "crash" });
    expect(toolResult(continuation(s, "pay"), "c1")).toBe('{"charged":5,"attempt":2}');
  });

  it("reconcile unknown: held ambiguous_effect, the tool not run again", async () => {
    const s = await server(chargeScript());
    const { def, runs, reconciled } = chargeAgent(s, { reconcile: () => ({ status: "unknown" }) });
    const stead = h.create();
    const [id = ""] = await cutAfterIntent(stead, def, "pay");
    h.worker(stead, { definitions: [def], leaseMs: CUT_LEASE_MS }).start();
    await stead.runs.waitFor(id, { until: (r) => r.status === "held", timeoutMs: 20_000 });
    expect((await stead.holds.list({ runId: id }))[0]).toMatchObject({ kind: "ambiguous_effect", stepId: "tool:c1", reason: expect.stringContaining("reconcile could not tell") as string });
    expect(reconciled).toHaveLength(1);
    expect(runs(id)).toHaveLength(1);
    expect(s.requests).toHaveLength(1);
  });
});
