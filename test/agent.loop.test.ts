/**
 * The agent loop against a real OpenAI-compatible server on 127.0.0.1: what the model is sent, what
 * the journal holds, live deltas, limits, bad input, and definition changes.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { agent, tool, workflow, type AgentConfig, type AgentOutput } from "../src/index.js";
import { FAST_FOLLOW } from "./helpers/temp-store.js";
import { providerModel, reply, type RecordedRequest } from "./helpers/provider-server.js";
import { caught, deferred } from "./helpers/waiting.js";
import {
  CUT_LEASE_MS,
  FAST_RETRY,
  agentTestKit,
  contentText,
  cutWhen,
  eventsOf,
  journalShape,
  rawJournal,
  toolResultsOf,
  transcriptProblems,
} from "./fixtures/agents/kit.js";

const { h, server } = agentTestKit();

/** A small repository the tools work on, and what they were asked to do. */
function repoTools() {
  const files = new Map([["src/date.ts", "export const parse = (s) => s;"]]);
  const calls: string[] = [];
  return {
    calls,
    files,
    tools: {
      readFile: tool({
        description: "Read a file",
        input: z.object({ path: z.string() }),
        idempotent: true,
        run: ({ path }) => {
          calls.push(`read ${path}`);
          return files.get(path) ?? `no file ${path}`;
        },
      }),
      writeFile: tool({
        input: z.object({ path: z.string(), text: z.string() }),
        run: ({ path, text }) => {
          calls.push(`write ${path}`);
          files.set(path, text);
          return { written: text.length };
        },
      }),
      runTests: tool({
        input: z.object({}),
        idempotent: true,
        run: () => {
          calls.push("test");
          return "1 passed";
        },
      }),
    },
  };
}

describe("the loop", () => {
  it("does a multi-step task: each model call sees the transcript so far, well formed, tool results in call order", async () => {
    const s = await server([
      reply.toolCalls([{ id: "c1", name: "readFile", args: { path: "src/date.ts" } }], { text: "Reading the parser.", usage: { promptTokens: 10, completionTokens: 5 } }),
      reply.toolCalls(
        [
          { id: "c2", name: "writeFile", args: { path: "src/date.ts", text: "fixed" } },
          { id: "c3", name: "runTests", args: {} },
        ],
        { usage: { promptTokens: 20, completionTokens: 7 } },
      ),
      reply.text("Fixed the parser; 1 test passes.", { chunks: 4, usage: { promptTokens: 30, completionTokens: 9 } }),
    ]);
    const repo = repoTools();
    const fixer = agent("fixer", { model: providerModel(s.url, "m1"), instructions: "Fix the failing test.", tools: repo.tools, retry: FAST_RETRY });
    const stead = h.create();

    const run = await stead.run(fixer, "the date parser test fails", FAST_FOLLOW);

    expect(run.error).toBeNull();
    expect(run.status).toBe("completed");
    expect(run.output).toEqual({
      text: "Fixed the parser; 1 test passes.",
      finishReason: "stop",
      modelCalls: 3,
      toolCalls: 3,
      usage: { inputTokens: 60, outputTokens: 21 },
    });
    expect(repo.calls).toEqual(["read src/date.ts", "write src/date.ts", "test"]);
    expect(repo.files.get("src/date.ts")).toBe("fixed");

    expect(s.requests).toHaveLength(3);
    const [r1, r2, r3] = s.requests as [RecordedRequest, RecordedRequest, RecordedRequest];
    expect(r1.messages.map((m) => [m.role, contentText(m)])).toEqual([
      ["system", "Fix the failing test."],
      ["user", "the date parser test fails"],
    ]);
    expect(r1.tools.map((t) => t.function.name).sort()).toEqual(["readFile", "runTests", "writeFile"]);
    expect(r1.tools.find((t) => t.function.name === "readFile")?.function).toMatchObject({
      description: "Read a file",
      parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    });
    for (const r of s.requests) expect(transcriptProblems(r.messages)).toEqual([]);
    // Each request extends the one before it: the transcript only grows.
    expect(r2.messages.slice(0, r1.messages.length)).toEqual(r1.messages);
    expect(r3.messages.slice(0, r2.messages.length)).toEqual(r2.messages);

    expect(r2.messages.slice(2)).toEqual([
      { role: "assistant", content: "Reading the parser.", tool_calls: [{ id: "c1", type: "function", function: { name: "readFile", arguments: '{"path":"src/date.ts"}' } }] },
      { role: "tool", tool_call_id: "c1", content: "export const parse = (s) => s;" },
    ]);
    expect(r3.messages[4]?.tool_calls?.map((c) => c.id)).toEqual(["c2", "c3"]);
    expect(toolResultsOf(r3)).toEqual([
      ["c1", "export const parse = (s) => s;"],
      ["c2", '{"written":5}'],
      ["c3", "1 passed"],
    ]);
  });

  it("journals one row per model call and one per tool call, nothing else", async () => {
    const s = await server([
      reply.toolCalls([{ id: "c1", name: "readFile", args: { path: "src/date.ts" } }]),
      reply.toolCalls([
        { id: "c2", name: "writeFile", args: { path: "src/date.ts", text: "fixed" } },
        { id: "c3", name: "runTests", args: {} },
      ]),
      reply.text("done"),
    ]);
    const fixer = agent("fixer", { model: providerModel(s.url, "m1"), tools: repoTools().tools, retry: FAST_RETRY });
    const stead = h.create();
    const run = await stead.run(fixer, "fix it", FAST_FOLLOW);
    expect(run.status).toBe("completed");

    expect(await journalShape(stead, run.id)).toEqual([
      ["model-1", "model", "completed"],
      ["tool:c1", "tool", "completed"],
      ["model-2", "model", "completed"],
      ["tool:c2", "tool", "completed"],
      ["tool:c3", "tool", "completed"],
      ["model-3", "model", "completed"],
    ]);
    const journal = await stead.runs.journal(run.id);
    expect(journal.filter((j) => j.kind === "model")).toHaveLength(s.requests.length);
    expect(journal.filter((j) => j.kind === "model").map((j) => j.attempt)).toEqual([1, 1, 1]);
    expect(journal[0]?.output).toEqual({
      kind: "response",
      model: "test-provider.chat:m1",
      content: [{ type: "tool-call", toolCallId: "c1", toolName: "readFile", input: '{"path":"src/date.ts"}' }],
      finishReason: "tool-calls",
      usage: { inputTokens: 0, outputTokens: 0 },
    });
    // A tool step journals the tool's value itself.
    expect(journal[1]?.output).toBe("export const parse = (s) => s;");
    expect(journal[3]?.output).toEqual({ written: 5 });
  });

  it("stores each model response once: no journal row holds the prompt or an earlier response", async () => {
    const turns = 6;
    const said = (k: number) => `RESPONSE-${k}-${"x".repeat(200)}`;
    const s = await server((req) => {
      const k = req.index + 1;
      return k < turns ? reply.toolCalls([{ id: `c${k}`, name: "note", args: { n: k } }], { text: said(k) }) : reply.text(said(k));
    });
    const notes = agent("notes", {
      model: providerModel(s.url),
      tools: { note: tool({ input: z.object({ n: z.number() }), idempotent: true, run: ({ n }) => `TOOL-RESULT-${n}` }) },
      retry: FAST_RETRY,
    });
    const stead = h.create();
    const prompt = `THE-PROMPT ${"p".repeat(500)}`;
    const run = await stead.run(notes, prompt, FAST_FOLLOW);
    expect(run.status).toBe("completed");
    expect(s.requests).toHaveLength(turns);
    // The last request carries the whole transcript: prompt, every response and every tool result.
    const last = JSON.stringify(s.requests[turns - 1]?.messages);
    for (let k = 1; k < turns; k++) expect(last).toContain(said(k));

    const rows = await rawJournal(stead, run.id);
    const stored = rows.map((r) => r.output ?? "").join("\n");
    const count = (text: string) => stored.split(text).length - 1;
    expect(count("THE-PROMPT")).toBe(0);
    for (let k = 1; k <= turns; k++) {
      expect(count(said(k))).toBe(1);
      expect(rows.find((r) => r.stepId === `model-${k}`)?.output).toContain(said(k));
    }
    for (let k = 1; k < turns; k++) expect(count(`TOOL-RESULT-${k}"`)).toBe(1);
    // So the journal grows with the turns, while the transcript sent grows with turns × turns.
    const sent = s.requests.reduce((n, r) => n + JSON.stringify(r.messages).length, 0);
    expect(stored.length * 2).toBeLessThan(sent);
  });

  it("streams text as model.delta events a follower sees while the call runs: far fewer events than chunks; once journaled, they give way to a model.text marker", async () => {
    const text = Array.from({ length: 400 }, (_, i) => `w${i} `).join("");
    const s = await server([reply.text(text, { chunks: 400, chunkDelayMs: 3 })]);
    const talker = agent("talker", { model: providerModel(s.url), retry: FAST_RETRY });
    const stead = h.create();
    const seen: { type: string; at: number; data: Record<string, unknown> }[] = [];
    const run = await stead.run(talker, "talk", { ...FAST_FOLLOW, onEvent: (e) => void seen.push(e) });
    expect(run.status).toBe("completed");
    expect((run.output as { text: string }).text).toBe(text);

    const live = seen.filter((e) => e.type === "model.delta");
    expect(live.length).toBeGreaterThan(0);
    for (const d of live) expect(d.data).toMatchObject({ step: "model-1", attempt: 1 });
    // What the follower saw live is the text as far as it got; batched, never one event per chunk.
    expect(text.startsWith(live.map((d) => String(d.data.text)).join(""))).toBe(true);
    // At most one flush per 200 ms of streaming (plus the last, and one for commit delays), however slow a loaded machine made the stream.
    const streamedMs = (live.at(-1)?.at ?? 0) - (live[0]?.at ?? 0);
    expect(live.length).toBeLessThanOrEqual(Math.floor(streamedMs / 200) + 3);
    expect(live.length).toBeLessThan(400 / 4);
    expect(await eventsOf(stead, run.id, "model.delta")).toEqual([]);
    expect((await eventsOf(stead, run.id, "model.text")).map((e) => e.data)).toEqual([{ step: "model-1", attempt: 1 }]);
    expect(await journalShape(stead, run.id)).toEqual([["model-1", "model", "completed"]]);
  });
});

describe("an agent inside a workflow", () => {
  it("ctx.agent runs it as a child run; the workflow gets its output", async () => {
    const s = await server([reply.text("summary: all good")]);
    const summarizer = agent("summarizer", { model: providerModel(s.url), retry: FAST_RETRY });
    const flow = workflow("report", async (ctx, topic: string) => {
      const out = await ctx.agent("summarize", summarizer, `summarize ${topic}`);
      return ctx.step("publish", () => `published: ${out.text}`);
    });
    const stead = h.create();
    const run = await stead.run(flow, "the week", { ...FAST_FOLLOW, definitions: [summarizer] });
    expect(run.status).toBe("completed");
    expect(run.output).toBe("published: summary: all good");
    const [child] = (await stead.runs.list({ definition: "summarizer" })).runs;
    expect(child?.parentId).toBe(run.id);
    expect((child?.output as AgentOutput).text).toBe("summary: all good");
    expect(contentText(s.requests[0]?.messages[0])).toBe("summarize the week");
  });
});

describe("limits", () => {
  /** A model that asks for another tool call every time. */
  async function loopingServer(usage?: { promptTokens: number; completionTokens: number }) {
    return server((req) => reply.toolCalls([{ id: `c${req.index + 1}`, name: "again", args: {} }], usage ? { usage } : {}));
  }
  /** `ran` gets the call id of every tool execution; with `gate`, the first execution of call c2 waits on it. */
  function looper(url: string, limits: Pick<AgentConfig, "maxTurns" | "maxSteps" | "tokenBudget">, ran: string[], gate?: Promise<void>) {
    return agent("looper", {
      model: providerModel(url),
      retry: FAST_RETRY,
      ...limits,
      tools: {
        again: tool({
          input: z.object({}),
          idempotent: true,
          run: async (_i, ctx) => {
            ran.push(ctx.toolCallId);
            if (gate && ctx.toolCallId === "c2" && ran.filter((c) => c === "c2").length === 1) await gate;
            return "ok";
          },
        }),
      },
    });
  }

  it("maxTurns: the run fails with STEAD_AGENT_LIMIT after that many model calls", async () => {
    const s = await loopingServer();
    const ran: string[] = [];
    const stead = h.create();
    const run = await stead.run(looper(s.url, { maxTurns: 2 }, ran), "loop", FAST_FOLLOW);
    expect(run.status).toBe("failed");
    expect(run.error).toMatchObject({ code: "STEAD_AGENT_LIMIT", message: expect.stringContaining("maxTurns (2)") as string });
    expect(s.requests).toHaveLength(2);
    expect(ran).toHaveLength(2);
  });

  it("maxSteps: model and tool steps together", async () => {
    const s = await loopingServer();
    const ran: string[] = [];
    const stead = h.create();
    const run = await stead.run(looper(s.url, { maxSteps: 3 }, ran), "loop", FAST_FOLLOW);
    expect(run.status).toBe("failed");
    expect(run.error).toMatchObject({ code: "STEAD_AGENT_LIMIT", message: expect.stringContaining("maxSteps (3)") as string });
    expect(s.requests).toHaveLength(2);
    expect(ran).toHaveLength(1);
    expect(await journalShape(stead, run.id)).toEqual([
      ["model-1", "model", "completed"],
      ["tool:c1", "tool", "completed"],
      ["model-2", "model", "completed"],
    ]);
  });

  it("tokenBudget: input plus output tokens as the provider reports them", async () => {
    const s = await loopingServer({ promptTokens: 50, completionTokens: 10 });
    const ran: string[] = [];
    const stead = h.create();
    const run = await stead.run(looper(s.url, { tokenBudget: 100 }, ran), "loop", FAST_FOLLOW);
    expect(run.status).toBe("failed");
    expect(run.error).toMatchObject({ code: "STEAD_AGENT_LIMIT", message: expect.stringContaining("tokenBudget (100)") as string });
    expect(s.requests).toHaveLength(2);
    expect(ran).toHaveLength(1);
  });

  it("a run resumed after a cut reaches the same counts: no model call beyond maxTurns", async () => {
    const s = await loopingServer();
    const ran: string[] = [];
    const gate = deferred();
    const def = looper(s.url, { maxTurns: 2 }, ran, gate.promise);
    const stead = h.create();
    const { id } = await stead.runs.start(def, "loop");
    // Cut while the second tool call runs: two model responses are journaled.
    await cutWhen(h, stead, def, id, (j) => j.some((r) => r.stepId === "model-2" && r.status === "completed") && ran.includes("c2"));
    h.worker(stead, { definitions: [def], leaseMs: CUT_LEASE_MS }).start();
    const run = await stead.runs.waitFor(id, { timeoutMs: 20_000 });
    gate.resolve();
    expect(run.status).toBe("failed");
    expect(run.error?.code).toBe("STEAD_AGENT_LIMIT");
    expect(s.requests).toHaveLength(2);
    // The idempotent tool cut off mid-call ran again; nothing else did.
    expect(ran).toEqual(["c1", "c2", "c2"]);
  });
});

describe("bad input", () => {
  it("a prompt that is neither a string nor { prompt } is refused at start with STEAD_SCHEMA_MISMATCH, before any run or model call", async () => {
    const s = await server(() => reply.text("hi"));
    const talker = agent("talker", { model: providerModel(s.url), retry: FAST_RETRY });
    const stead = h.create();
    for (const input of [42, { text: "hi" }, { prompt: 7 }, null]) {
      const e = await caught(() => stead.run(talker, input as never, FAST_FOLLOW));
      expect(e).toMatchObject({ code: "STEAD_SCHEMA_MISMATCH", message: 'the input of "talker" does not match its input schema: (root): must be a prompt: a string or { prompt: string }' });
    }
    expect((await stead.runs.list()).runs).toEqual([]);
    expect(s.requests).toHaveLength(0);
    const ok = await stead.run(talker, { prompt: "hello there" }, FAST_FOLLOW);
    expect(ok.status).toBe("completed");
    expect(contentText(s.requests[0]?.messages[0])).toBe("hello there");
  });

  it("a child agent run whose input has no prompt fails with STEAD_SCHEMA_MISMATCH before any model call", async () => {
    const s = await server(() => reply.text("hi"));
    const talker = agent("talker", { model: providerModel(s.url), retry: FAST_RETRY });
    const parent = workflow("asks-badly", (ctx) => ctx.agent("ask", talker, 42 as never));
    const stead = h.create();
    const run = await stead.run(parent, null, { ...FAST_FOLLOW, definitions: [talker] });
    expect(run.status).toBe("failed");
    const [child] = (await stead.runs.list({ definition: "talker" })).runs;
    expect(child?.error).toMatchObject({ code: "STEAD_SCHEMA_MISMATCH", message: expect.stringMatching(/agent talker needs a prompt: a string or \{ prompt: string \}/) as string });
    expect(s.requests).toHaveLength(0);
  });

  it("agent() and tool() refuse a bad definition at once, naming it", async () => {
    const s = await server();
    const model = providerModel(s.url);
    const bad = async (make: () => unknown, message: RegExp) => {
      const e = await caught(() => Promise.resolve().then(make));
      expect(e).toMatchObject({ code: "STEAD_INVALID_DEFINITION", message: expect.stringMatching(message) as string });
    };
    await bad(() => agent("no spaces allowed", { model }), /invalid agent name "no spaces allowed"/);
    await bad(() => agent("a", { model: "gpt-4o" as never }), /model "gpt-4o" is a string id/);
    await bad(() => agent("a", { model: [] }), /agent a has no model/);
    await bad(() => agent("a", { model: {} as never }), /model #1 is not an AI SDK language model/);
    await bad(() => agent("a", { model, maxTurns: 0 }), /maxTurns must be a positive integer, got 0/);
    await bad(() => agent("a", { model, tokenBudget: 1.5 }), /tokenBudget must be a positive integer/);
    await bad(() => agent("a", { model, tools: { "bad name": tool({ input: z.object({}), run: () => 1 }) } }), /tool "bad name"/);
    await bad(() => agent("a", { model, tools: { t: { run: () => 1 } as never } }), /tool "t" is not a tool\(\)/);
    await bad(() => tool({ run: () => 1 } as never), /tool\(\) needs an input schema/);
  });
});

describe("definition changes", () => {
  const deployInput = z.object({ env: z.enum(["staging", "prod"]) });
  function deployer(url: string, config: { instructions?: string; input?: z.ZodType<{ env: "staging" | "prod" }> }, ran: unknown[]) {
    return agent("deployer", {
      model: providerModel(url),
      instructions: config.instructions ?? "Deploy carefully.",
      retry: FAST_RETRY,
      tools: {
        deploy: tool({ input: config.input ?? deployInput, needsApproval: true, run: (i) => (ran.push(i), "deployed") }),
      },
    });
  }
  const script = () => [reply.toolCalls([{ id: "c1", name: "deploy", args: { env: "prod" } }]), reply.text("all done")];

  it.each([
    ["the instructions change", { instructions: "Deploy recklessly." }],
    ["a tool's input schema changes", { input: z.object({ env: z.enum(["staging", "prod"]), force: z.boolean().optional() }) as never }],
  ])("%s while the run waits: resuming holds it definition_changed, no model call under the new code", async (_what, change) => {
    const s = await server(script());
    const ran: unknown[] = [];
    const v1 = deployer(s.url, {}, ran);
    const v2 = deployer(s.url, change, ran);
    expect(v2.fingerprint()).not.toBe(v1.fingerprint());
    const stead = h.create();
    const parked = await stead.run(v1, "ship it", FAST_FOLLOW);
    expect(parked.status).toBe("waiting");
    expect(parked.fingerprint).toBe(v1.fingerprint());
    await stead.runs.approve(parked.id, "approve:c1", { by: "ann" });

    const held = await stead.runs.follow(parked.id, [v2], FAST_FOLLOW);
    expect(held.status).toBe("held");
    const [hold] = await stead.holds.list({ runId: parked.id });
    expect(hold).toMatchObject({ kind: "definition_changed", details: { recorded: v1.fingerprint(), current: v2.fingerprint() } });
    expect(s.requests).toHaveLength(1);
    expect(ran).toEqual([]);

    // Accepting the change resumes it under the new code.
    await stead.runs.release(parked.id, "definition_changed", { choice: "accept-change", by: "ann" });
    const done = await stead.runs.follow(parked.id, [v2], FAST_FOLLOW);
    expect(done.status).toBe("completed");
    expect(done.fingerprint).toBe(v2.fingerprint());
    expect(ran).toEqual([{ env: "prod" }]);
    expect(s.requests).toHaveLength(2);
  });

  it("the same definition made again (same models, instructions, tools) resumes without a hold", async () => {
    const s = await server(script());
    const ran: unknown[] = [];
    const v1 = deployer(s.url, {}, ran);
    const again = deployer(s.url, {}, ran);
    expect(again.fingerprint()).toBe(v1.fingerprint());
    const stead = h.create();
    const parked = await stead.run(v1, "ship it", FAST_FOLLOW);
    await stead.runs.approve(parked.id, "approve:c1");
    const done = await stead.runs.follow(parked.id, [again], FAST_FOLLOW);
    expect(done.status).toBe("completed");
    expect(ran).toEqual([{ env: "prod" }]);
  });

  it("the fingerprint covers the model id, the instructions and the tool schemas, not the tool code", async () => {
    const s = await server();
    const base = (over: Partial<AgentConfig>) => agent("fp", { model: providerModel(s.url, "m1"), instructions: "x", tools: { t: tool({ input: z.object({ a: z.string() }), run: () => 1 }) }, ...over });
    const fp = base({}).fingerprint();
    expect(fp).toMatch(/^agent:[0-9a-f]{16}$/);
    expect(base({ model: providerModel(s.url, "m2") }).fingerprint()).not.toBe(fp);
    expect(base({ instructions: "y" }).fingerprint()).not.toBe(fp);
    expect(base({ tools: { t: tool({ input: z.object({ a: z.number() }), run: () => 1 }) } }).fingerprint()).not.toBe(fp);
    expect(base({ tools: { u: tool({ input: z.object({ a: z.string() }), run: () => 1 }) } }).fingerprint()).not.toBe(fp);
    expect(base({ tools: { t: tool({ input: z.object({ a: z.string() }), run: () => 2 }) } }).fingerprint()).toBe(fp);
    expect(base({ maxTurns: 3 }).fingerprint()).toBe(fp);
  });
});
