/**
 * The scripted model: a deterministic LanguageModelV3 whose answers depend on the transcript only.
 */
import type { LanguageModelV3, LanguageModelV3Prompt, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import { describe, expect, it } from "vitest";
import { lastUserText, modelTurns, scriptedModel, splitWords, toolResults, type ScriptedTurn } from "../src/agent/scripted-model.js";
import { SteadError } from "../src/errors.js";
import { caught } from "./helpers/waiting.js";

const user = (text: string): LanguageModelV3Prompt[number] => ({ role: "user", content: [{ type: "text", text }] });

async function readAll(model: LanguageModelV3, prompt: LanguageModelV3Prompt): Promise<LanguageModelV3StreamPart[]> {
  const { stream } = await model.doStream({ prompt });
  const parts: LanguageModelV3StreamPart[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return parts;
    parts.push(value);
  }
}

/** A fixer: read the file, then run the tests, then report; decided by how many tool results the transcript holds. */
function fixer(): (prompt: LanguageModelV3Prompt) => ScriptedTurn {
  return (prompt) => {
    const done = toolResults(prompt).length;
    if (done === 0) return { text: "Let me read the parser.", toolCalls: [{ name: "readFile", input: { path: "src/date.ts" } }] };
    if (done === 1) return { toolCalls: [{ name: "writeFile", input: { path: "src/date.ts", text: "fixed" } }, { name: "runTests", input: {} }] };
    return { text: `Fixed: ${lastUserText(prompt)}. Tests pass.` };
  };
}

/** Appends the model's answer and a result per tool call, as a loop would. */
function advance(prompt: LanguageModelV3Prompt, parts: LanguageModelV3StreamPart[]): LanguageModelV3Prompt {
  const text = parts.flatMap((p) => (p.type === "text-delta" ? [p.delta] : [])).join("");
  const calls = parts.flatMap((p) => (p.type === "tool-call" ? [p] : []));
  return [
    ...prompt,
    {
      role: "assistant",
      content: [
        ...(text ? [{ type: "text" as const, text }] : []),
        ...calls.map((c) => ({ type: "tool-call" as const, toolCallId: c.toolCallId, toolName: c.toolName, input: JSON.parse(c.input) as unknown })),
      ],
    },
    ...(calls.length > 0
      ? [{ role: "tool" as const, content: calls.map((c) => ({ type: "tool-result" as const, toolCallId: c.toolCallId, toolName: c.toolName, output: { type: "text" as const, value: `ok ${c.toolName}` } })) }]
      : []),
  ];
}

describe("scriptedModel", () => {
  it("is a v3 model with the given ids and no supported URLs", () => {
    const m = scriptedModel({ modelId: "demo", provider: "stead-demo", respond: () => ({ text: "x" }) });
    expect(m).toMatchObject({ specificationVersion: "v3", modelId: "demo", provider: "stead-demo", supportedUrls: {} });
    expect(scriptedModel({ respond: () => ({}) })).toMatchObject({ modelId: "scripted-model", provider: "scripted" });
  });

  it("streams text as several text-delta parts that add up to the text, then a finish", async () => {
    const text = "The date parser mis-reads two-digit years.  Fixing it now.";
    const parts = await readAll(scriptedModel({ respond: () => ({ text, usage: { inputTokens: 12, outputTokens: 5 } }) }), [user("go")]);
    const deltas = parts.flatMap((p) => (p.type === "text-delta" ? [p.delta] : []));
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join("")).toBe(text);
    expect(parts.map((p) => p.type)).toEqual(["stream-start", "response-metadata", "text-start", ...deltas.map(() => "text-delta"), "text-end", "finish"]);
    expect(parts.at(-1)).toEqual({
      type: "finish",
      finishReason: { unified: "stop", raw: "stop" },
      usage: { inputTokens: { total: 12, noCache: 12, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } },
    });
  });

  it("emits tool calls with ids from the transcript position and JSON-text input", async () => {
    const m = scriptedModel({ respond: fixer() });
    const p0: LanguageModelV3Prompt = [{ role: "system", content: "fix it" }, user("the date parser test fails")];
    const parts0 = await readAll(m, p0);
    expect(parts0.filter((p) => p.type === "tool-call")).toEqual([{ type: "tool-call", toolCallId: "call_0_0", toolName: "readFile", input: '{"path":"src/date.ts"}' }]);
    expect(parts0.filter((p) => p.type.startsWith("tool-input")).map((p) => p.type)).toEqual(["tool-input-start", "tool-input-delta", "tool-input-end"]);
    expect(parts0.at(-1)).toMatchObject({ type: "finish", finishReason: { unified: "tool-calls" } });

    const p1 = advance(p0, parts0);
    const parts1 = await readAll(m, p1);
    expect(parts1.filter((p) => p.type === "tool-call")).toEqual([
      { type: "tool-call", toolCallId: "call_1_0", toolName: "writeFile", input: '{"path":"src/date.ts","text":"fixed"}' },
      { type: "tool-call", toolCallId: "call_1_1", toolName: "runTests", input: "{}" },
    ]);

    const parts2 = await readAll(m, advance(p1, parts1));
    expect(parts2.filter((p) => p.type === "tool-call")).toEqual([]);
    expect(parts2.flatMap((p) => (p.type === "text-delta" ? [p.delta] : [])).join("")).toBe("Fixed: the date parser test fails. Tests pass.");
    expect(parts2.at(-1)).toMatchObject({ type: "finish", finishReason: { unified: "stop" } });
  });

  it("keeps a given tool-call id and encodes a missing input as {}", async () => {
    const parts = await readAll(scriptedModel({ respond: () => ({ toolCalls: [{ name: "ping", input: undefined, id: "mine" }] }) }), [user("x")]);
    expect(parts.find((p) => p.type === "tool-call")).toEqual({ type: "tool-call", toolCallId: "mine", toolName: "ping", input: "{}" });
  });

  it("answers the same transcript the same way: repeated calls and a fresh instance (a replacement process)", async () => {
    const prompt = advance([user("the date parser test fails")], await readAll(scriptedModel({ respond: fixer() }), [user("the date parser test fails")]));
    const first = scriptedModel({ respond: fixer() });
    const a = await readAll(first, prompt);
    const b = await readAll(first, prompt);
    const c = await readAll(scriptedModel({ respond: fixer() }), structuredClone(prompt));
    expect(b).toEqual(a);
    expect(c).toEqual(a);
    const generated = await first.doGenerate({ prompt });
    expect(generated.content).toEqual(a.filter((p) => p.type === "tool-call"));
  });

  it("doGenerate returns the same content, finish reason and usage as doStream", async () => {
    const m = scriptedModel({ respond: () => ({ text: "Reading it.", toolCalls: [{ name: "readFile", input: { path: "a" } }] }) });
    const prompt = [user("hi")];
    const g = await m.doGenerate({ prompt });
    const parts = await readAll(m, prompt);
    expect(g.content).toEqual([
      { type: "text", text: "Reading it." },
      { type: "tool-call", toolCallId: "call_0_0", toolName: "readFile", input: '{"path":"a"}' },
    ]);
    const finish = parts.at(-1);
    expect(finish?.type === "finish" && { finishReason: finish.finishReason, usage: finish.usage }).toEqual({ finishReason: g.finishReason, usage: g.usage });
    expect(g.warnings).toEqual([]);
  });

  it("estimates usage from the prompt and the answer when none is scripted", async () => {
    const prompt = [user("x".repeat(400))];
    const g = await scriptedModel({ respond: () => ({ text: "y".repeat(40) }) }).doGenerate({ prompt });
    expect(g.usage.inputTokens.total).toBe(Math.ceil(JSON.stringify(prompt).length / 4));
    expect(g.usage.outputTokens.total).toBe(10);
  });

  it("honours a scripted finish reason", async () => {
    const g = await scriptedModel({ respond: () => ({ text: "cut", finishReason: "length" }) }).doGenerate({ prompt: [user("x")] });
    expect(g.finishReason).toEqual({ unified: "length", raw: "length" });
  });

  it("with chunkDelayMs, an abort lands mid-stream: some deltas arrived, the read rejects with the abort reason", async () => {
    const ac = new AbortController();
    const text = "one two three four five six";
    const { stream } = await scriptedModel({ respond: () => ({ text }), chunkDelayMs: 60_000 }).doStream({ prompt: [user("x")], abortSignal: ac.signal });
    const reader = stream.getReader();
    const deltas: string[] = [];
    for (;;) {
      const { value } = await reader.read();
      if (value?.type === "text-delta") {
        deltas.push(value.delta);
        break;
      }
    }
    const pending = reader.read();
    const reason = new Error("worker stopping");
    ac.abort(reason);
    expect(await caught(async () => pending)).toBe(reason);
    expect(deltas).toEqual(["one "]);
  });

  it("an already-aborted call is refused before respond runs", async () => {
    let called = 0;
    const m = scriptedModel({
      respond: () => {
        called++;
        return { text: "x" };
      },
    });
    const ac = new AbortController();
    ac.abort();
    expect(((await caught(async () => m.doStream({ prompt: [user("x")], abortSignal: ac.signal }))) as Error).name).toBe("AbortError");
    expect(((await caught(async () => m.doGenerate({ prompt: [user("x")], abortSignal: ac.signal }))) as Error).name).toBe("AbortError");
    expect(called).toBe(0);
  });

  it("passes the call's tools to respond", async () => {
    const seen: string[] = [];
    const m = scriptedModel({
      respond: (_prompt, call) => {
        for (const t of call.tools ?? []) seen.push(t.name);
        return { text: "ok" };
      },
    });
    await m.doGenerate({ prompt: [user("x")], tools: [{ type: "function", name: "readFile", inputSchema: { type: "object" } }] });
    expect(seen).toEqual(["readFile"]);
  });

  it("refuses a malformed turn with a SteadError", async () => {
    const bad = [() => null as unknown as ScriptedTurn, () => ({ toolCalls: [{ name: "", input: {} }] }), () => ({ toolCalls: [{ name: "f", input: () => 1 }] })];
    for (const respond of bad) {
      const e = await caught(async () => scriptedModel({ respond }).doGenerate({ prompt: [user("x")] }));
      expect(e).toBeInstanceOf(SteadError);
      expect((e as SteadError).code).toBe("STEAD_INVALID_DEFINITION");
      expect((e as SteadError).fix).toBeTruthy();
    }
  });

  it("works as the model of the AI SDK's generateText and streamText, tools included", async () => {
    const executed: string[] = [];
    const tools = {
      readFile: tool({
        inputSchema: jsonSchema<{ path: string }>({ type: "object", properties: { path: { type: "string" } }, required: ["path"] }),
        execute: ({ path }) => {
          executed.push(path);
          return `contents of ${path}`;
        },
      }),
    };
    const respond = (prompt: LanguageModelV3Prompt): ScriptedTurn => {
      const results = toolResults(prompt);
      if (results.length === 0) return { toolCalls: [{ name: "readFile", input: { path: "a.ts" } }] };
      const out = results[0]?.output;
      return { text: `read: ${out?.type === "text" ? out.value : JSON.stringify(out)}` };
    };
    const g = await generateText({ model: scriptedModel({ respond }), prompt: "go", tools, stopWhen: stepCountIs(3) });
    expect(g.text).toBe("read: contents of a.ts");
    expect(g.steps).toHaveLength(2);

    const s = streamText({ model: scriptedModel({ respond }), prompt: "go", tools, stopWhen: stepCountIs(3) });
    expect(await s.text).toBe("read: contents of a.ts");
    expect(executed).toEqual(["a.ts", "a.ts"]);
  });
});

describe("prompt helpers", () => {
  const prompt: LanguageModelV3Prompt = [
    { role: "system", content: "sys" },
    user("first"),
    { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "t", input: {} }] },
    { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "t", output: { type: "json", value: { ok: true } } }] },
    { role: "assistant", content: [{ type: "text", text: "done" }] },
    { role: "user", content: [{ type: "text", text: "second " }, { type: "text", text: "question" }] },
  ];

  it("lastUserText, toolResults, modelTurns", () => {
    expect(lastUserText(prompt)).toBe("second question");
    expect(lastUserText([{ role: "system", content: "s" }])).toBe("");
    expect(toolResults(prompt)).toEqual([{ toolCallId: "c1", toolName: "t", output: { type: "json", value: { ok: true } } }]);
    expect(modelTurns(prompt)).toBe(2);
  });

  it.each(["one", "one two", "  leading and trailing  ", "a\n\nb\tc", "   "])("splitWords(%j) re-joins to the text", (text) => {
    const pieces = splitWords(text);
    expect(pieces.join("")).toBe(text);
    expect(pieces.every((p) => p.length > 0)).toBe(true);
  });
});
