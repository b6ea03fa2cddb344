/**
 * The loopback provider server, read through the real `@ai-sdk/openai-compatible` chat model: each
 * scripted reply arrives as the AI SDK's parts and errors, exactly as a real provider's would.
 *
 * What a cut stream looks like (asserted below): the `doStream` promise resolves (the 200 and its
 * headers arrived), the parts sent before the cut are read, then `reader.read()` REJECTS with an
 * `APICallError` ("Failed to process successful response", statusCode 200, isRetryable true, cause a
 * TypeError "terminated" whose cause has code UND_ERR_SOCKET). It is not an `error` part. A cut JSON
 * reply makes `doGenerate` reject with the same error.
 */
import { APICallError, InvalidResponseDataError, type LanguageModelV3CallOptions, type LanguageModelV3Prompt, type LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { providerModel, reply, startProviderServer, type ProviderServer } from "./helpers/provider-server.js";
import { caught, waitUntil } from "./helpers/waiting.js";

const execFileAsync = promisify(execFile);
const servers: ProviderServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function server(...args: Parameters<typeof startProviderServer>): Promise<ProviderServer> {
  const s = await startProviderServer(...args);
  servers.push(s);
  return s;
}

const prompt: LanguageModelV3Prompt = [
  { role: "system", content: "You fix tests." },
  { role: "user", content: [{ type: "text", text: "the date parser test fails" }] },
];

const tools: LanguageModelV3CallOptions["tools"] = [
  { type: "function", name: "readFile", description: "Read a file", inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
];

/** Reads the whole stream: the parts, and the rejection that ended it (if any). */
async function drain(stream: ReadableStream<LanguageModelV3StreamPart>): Promise<{ parts: LanguageModelV3StreamPart[]; rejected?: unknown }> {
  const parts: LanguageModelV3StreamPart[] = [];
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { parts };
      parts.push(value);
    }
  } catch (e) {
    return { parts, rejected: e };
  }
}

const textOf = (parts: LanguageModelV3StreamPart[]): string[] => parts.flatMap((p) => (p.type === "text-delta" ? [p.delta] : []));

describe("provider server through @ai-sdk/openai-compatible", () => {
  it("records the request: path, model, messages, tools, headers, stream options, index", async () => {
    const s = await server([reply.text("ok"), reply.text("ok")]);
    const model = providerModel(s.url, "gpt-test", { apiKey: "sk-abc" });
    await drain((await model.doStream({ prompt, tools })).stream);
    await model.doGenerate({ prompt });

    expect(s.requests).toHaveLength(2);
    const [r0, r1] = s.requests;
    expect(r0).toMatchObject({ index: 0, method: "POST", path: "/v1/chat/completions", model: "gpt-test", stream: true, includeUsage: true });
    expect(r0?.headers.authorization).toBe("Bearer sk-abc");
    expect(r0?.messages).toEqual([
      { role: "system", content: "You fix tests." },
      { role: "user", content: "the date parser test fails" },
    ]);
    expect(r0?.tools).toEqual([
      { type: "function", function: { name: "readFile", description: "Read a file", parameters: tools?.[0]?.type === "function" ? tools[0].inputSchema : null } },
    ]);
    expect(r1).toMatchObject({ index: 1, stream: false, includeUsage: false, tools: [] });
  });

  it("streams text in the scripted number of chunks, with finish reason and usage", async () => {
    const s = await server([reply.text("Hello, world!", { chunks: 3, chunkDelayMs: 5, usage: { promptTokens: 11, completionTokens: 4, cachedTokens: 2 } })]);
    const { stream } = await providerModel(s.url).doStream({ prompt });
    const { parts, rejected } = await drain(stream);

    expect(rejected).toBeUndefined();
    expect(textOf(parts)).toEqual(["Hell", "o, w", "orld!"]);
    expect(parts.map((p) => p.type)).toEqual(["stream-start", "response-metadata", "text-start", "text-delta", "text-delta", "text-delta", "text-end", "finish"]);
    const finish = parts.at(-1);
    expect(finish).toMatchObject({
      type: "finish",
      finishReason: { unified: "stop", raw: "stop" },
      usage: { inputTokens: { total: 11, noCache: 9, cacheRead: 2 }, outputTokens: { total: 4 } },
    });
  });

  it("streams several tool calls in one response, with their ids and JSON input", async () => {
    const s = await server([
      reply.toolCalls(
        [
          { id: "call_a", name: "readFile", args: { path: "src/date.ts" } },
          { id: "call_b", name: "runTests", args: {} },
        ],
        { text: "Let me look.", usage: { promptTokens: 20, completionTokens: 9 } },
      ),
    ]);
    const { stream } = await providerModel(s.url).doStream({ prompt, tools });
    const { parts, rejected } = await drain(stream);

    expect(rejected).toBeUndefined();
    expect(textOf(parts).join("")).toBe("Let me look.");
    const calls = parts.filter((p) => p.type === "tool-call");
    expect(calls).toEqual([
      { type: "tool-call", toolCallId: "call_a", toolName: "readFile", input: '{"path":"src/date.ts"}' },
      { type: "tool-call", toolCallId: "call_b", toolName: "runTests", input: "{}" },
    ]);
    // The arguments arrived in pieces (the client reassembled them).
    expect(parts.filter((p) => p.type === "tool-input-delta" && p.id === "call_a").length).toBeGreaterThan(1);
    expect(parts.at(-1)).toMatchObject({ type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage: { inputTokens: { total: 20 }, outputTokens: { total: 9 } } });
  });

  it("sends usage in a stream only when the client asked for it (stream_options.include_usage)", async () => {
    const s = await server([reply.text("hi", { usage: { promptTokens: 3, completionTokens: 1 } })]);
    const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
    const plain = createOpenAICompatible({ name: "plain", baseURL: s.url, apiKey: "k" }).chatModel("m");
    const { parts } = await drain((await plain.doStream({ prompt })).stream);
    expect(s.requests[0]?.includeUsage).toBe(false);
    expect(parts.at(-1)).toMatchObject({ type: "finish", usage: { inputTokens: { total: undefined }, outputTokens: { total: undefined } } });
  });

  it("answers doGenerate with JSON: text, tool calls, finish reason, usage", async () => {
    const s = await server([
      reply.text("All green.", { usage: { promptTokens: 7, completionTokens: 3 } }),
      reply.toolCalls([{ id: "call_x", name: "readFile", args: { path: "a" } }, { id: "call_y", name: "readFile", rawArguments: "{not json" }]),
    ]);
    const model = providerModel(s.url);
    const a = await model.doGenerate({ prompt });
    expect(a.content).toEqual([{ type: "text", text: "All green." }]);
    expect(a.finishReason).toEqual({ unified: "stop", raw: "stop" });
    expect(a.usage.inputTokens.total).toBe(7);
    expect(a.usage.outputTokens.total).toBe(3);

    const b = await model.doGenerate({ prompt, tools });
    expect(b.content).toEqual([
      { type: "tool-call", toolCallId: "call_x", toolName: "readFile", input: '{"path":"a"}' },
      { type: "tool-call", toolCallId: "call_y", toolName: "readFile", input: "{not json" },
    ]);
    expect(b.finishReason.unified).toBe("tool-calls");
  });

  it.each([500, 529, 429, 400, 401, 403])("HTTP %i surfaces as APICallError with statusCode, headers and the provider's message", async (status) => {
    const headers: Record<string, string> = status === 429 ? { "retry-after": "7", "x-ratelimit-reset-requests": "6m0s", "x-ratelimit-reset-tokens": "20ms", "retry-after-ms": "7000" } : { "x-request-id": `req-${status}` };
    const s = await server([reply.error(status, `failure ${status}`, { headers, code: `code_${status}` }), reply.error(status, `failure ${status}`, { headers })]);
    const model = providerModel(s.url);

    const fromStream = await caught(async () => model.doStream({ prompt }));
    const fromGenerate = await caught(async () => model.doGenerate({ prompt }));
    for (const e of [fromStream, fromGenerate]) {
      expect(APICallError.isInstance(e)).toBe(true);
      const err = e as APICallError;
      expect(err.statusCode).toBe(status);
      expect(err.message).toBe(`failure ${status}`);
      for (const [k, v] of Object.entries(headers)) expect(err.responseHeaders?.[k]).toBe(v);
      expect(err.isRetryable).toBe(status === 429 || status >= 500);
    }
    expect((fromStream as APICallError).data).toEqual({ error: { message: `failure ${status}`, type: expect.any(String) as string, code: `code_${status}`, param: null } });
  });

  it("an error body that is not JSON leaves the status text as message and the raw body on the error", async () => {
    const s = await server([{ kind: "error", status: 502, rawBody: "<html>bad gateway</html>" }]);
    const e = (await caught(async () => providerModel(s.url).doStream({ prompt }))) as APICallError;
    expect(e.statusCode).toBe(502);
    expect(e.message).toBe("Bad Gateway");
    expect(e.responseBody).toBe("<html>bad gateway</html>");
    expect(e.data).toBeUndefined();
  });

  it("a cut stream: the parts before the cut arrive, then the read rejects with a retryable APICallError", async () => {
    const s = await server([reply.text("one two three four", { chunks: 4, cutAfterChunks: 2 })]);
    const { stream } = await providerModel(s.url).doStream({ prompt });
    const { parts, rejected } = await drain(stream);

    expect(textOf(parts)).toEqual(["one ", "two t"]);
    expect(parts.some((p) => p.type === "finish" || p.type === "error")).toBe(false);
    expect(APICallError.isInstance(rejected)).toBe(true);
    const e = rejected as APICallError;
    expect(e.message).toBe("Failed to process successful response");
    expect(e.statusCode).toBe(200);
    expect(e.isRetryable).toBe(true);
    const cause = e.cause as Error & { cause?: { code?: string } };
    expect(cause.message).toBe("terminated");
    expect(cause.cause?.code).toBe("UND_ERR_SOCKET");
  });

  it("a cut JSON reply rejects doGenerate with the same retryable APICallError", async () => {
    const s = await server([reply.text("a long enough answer", { cutAfterChunks: 0 })]);
    const e = (await caught(async () => providerModel(s.url).doGenerate({ prompt }))) as APICallError;
    expect(APICallError.isInstance(e)).toBe(true);
    expect(e.statusCode).toBe(200);
    expect(e.isRetryable).toBe(true);
    expect((e.cause as { cause?: { code?: string } }).cause?.code).toBe("UND_ERR_SOCKET");
  });

  it("a stream that ends cleanly without a finish: an `error` part (InvalidResponseDataError), then a finish with reason error", async () => {
    const s = await server([reply.text("one two", { chunks: 2, endAfterChunks: 1 })]);
    const { parts, rejected } = await drain((await providerModel(s.url).doStream({ prompt })).stream);
    expect(rejected).toBeUndefined();
    expect(textOf(parts)).toEqual(["one"]);
    const err = parts.find((p) => p.type === "error");
    expect(InvalidResponseDataError.isInstance(err?.type === "error" ? err.error : undefined)).toBe(true);
    expect(parts.at(-1)).toMatchObject({ type: "finish", finishReason: { unified: "error" } });
  });

  it("a JSON reply that ends early rejects doGenerate with 'Invalid JSON response' (status 200)", async () => {
    const s = await server([reply.text("an answer that gets truncated", { endAfterChunks: 0 })]);
    const e = (await caught(async () => providerModel(s.url).doGenerate({ prompt }))) as APICallError;
    expect(APICallError.isInstance(e)).toBe(true);
    expect(e.message).toBe("Invalid JSON response");
    expect(e.statusCode).toBe(200);
  });

  it("a hanging stream delivers its first chunks and then nothing until the client aborts", async () => {
    const s = await server([reply.text("never finishes", { chunks: 3, hangAfterChunks: 1 })]);
    const ac = new AbortController();
    const { stream } = await providerModel(s.url).doStream({ prompt, abortSignal: ac.signal });
    const reader = stream.getReader();
    const seen: LanguageModelV3StreamPart[] = [];
    while (!seen.some((p) => p.type === "text-delta")) {
      const { done, value } = await reader.read();
      if (done) throw new Error("stream ended");
      seen.push(value);
    }
    const pending = reader.read();
    ac.abort();
    const e = await caught(async () => pending);
    expect((e as Error).name).toBe("AbortError");
    await waitUntil("the server to see the client go away", () => s.requests[0]?.clientClosed);
  });

  it("close() ends a hanging stream: the client's read rejects", async () => {
    const s = await server([reply.text("never finishes", { hangAfterChunks: 0 })]);
    const { stream } = await providerModel(s.url).doStream({ prompt });
    const reading = drain(stream);
    await s.close();
    const { rejected } = await reading;
    expect(APICallError.isInstance(rejected)).toBe(true);
    expect((rejected as APICallError).isRetryable).toBe(true);
  });

  it("a delay before headers holds the response (an abort lands before any status)", async () => {
    const s = await server([reply.text("late", { delayMs: 60_000 })]);
    const ac = new AbortController();
    const call = caught(async () => providerModel(s.url).doStream({ prompt, abortSignal: ac.signal }));
    await s.waitForRequests(1);
    ac.abort();
    expect(((await call) as Error).name).toBe("AbortError");
  });

  it("an in-stream error event arrives as an `error` part and a finish with reason error", async () => {
    const s = await server([reply.text("partial", { streamError: { message: "Provider overloaded", type: "overloaded_error", code: 502 } })]);
    const { parts, rejected } = await drain((await providerModel(s.url).doStream({ prompt })).stream);
    expect(rejected).toBeUndefined();
    const err = parts.find((p) => p.type === "error");
    expect(err).toEqual({ type: "error", error: { message: "Provider overloaded", type: "overloaded_error", code: 502, param: null } });
    expect(parts.at(-1)).toMatchObject({ type: "finish", finishReason: { unified: "error" } });
  });

  it("a handler sees each request and can decide from the transcript; the queue goes first", async () => {
    const s = await server((req) => (req.messages.some((m) => m.role === "tool") ? reply.text("done") : reply.toolCalls([{ id: `call_${req.index}`, name: "readFile", args: { path: "x" } }])));
    s.enqueue(reply.error(503, "warming up"));
    const model = providerModel(s.url);
    expect(((await caught(async () => model.doGenerate({ prompt }))) as APICallError).statusCode).toBe(503);
    const first = await model.doGenerate({ prompt, tools });
    expect(first.content).toEqual([{ type: "tool-call", toolCallId: "call_1", toolName: "readFile", input: '{"path":"x"}' }]);
    const second = await model.doGenerate({
      prompt: [
        ...prompt,
        { role: "assistant", content: [{ type: "tool-call", toolCallId: "call_1", toolName: "readFile", input: { path: "x" } }] },
        { role: "tool", content: [{ type: "tool-result", toolCallId: "call_1", toolName: "readFile", output: { type: "text", value: "contents" } }] },
      ],
      tools,
    });
    expect(second.content).toEqual([{ type: "text", text: "done" }]);
    expect(s.requests[2]?.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "call_1", content: "contents" });
  });

  it("an unscripted request and a throwing handler get a 400 that names the problem", async () => {
    const s = await server();
    const model = providerModel(s.url);
    const e1 = (await caught(async () => model.doGenerate({ prompt }))) as APICallError;
    expect(e1.statusCode).toBe(400);
    expect(e1.message).toBe("provider test server: no reply scripted for request #0");
    s.setHandler(() => {
      throw new Error("script bug");
    });
    const e2 = (await caught(async () => model.doGenerate({ prompt }))) as APICallError;
    expect(e2.message).toContain("handler threw for request #1: script bug");
    expect(s.handlerErrors.map((e) => e.message)).toEqual(["script bug"]);
  });

  it("a child process talks to the server through providerModel(url); the script stays in the test process", async () => {
    const s = await server((req) => reply.text(`hello child, you are request #${req.index}`, { chunks: 2 }));
    const code = [
      `import { providerModel } from ${JSON.stringify(fileURLToPath(new URL("./helpers/provider-server.ts", import.meta.url)))};`,
      `const { stream } = await providerModel(process.argv[1], "child-model").doStream({ prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }] });`,
      `let text = ""; for await (const p of stream) if (p.type === "text-delta") text += p.delta;`,
      `process.stdout.write(text);`,
    ].join("\n");
    const { stdout } = await execFileAsync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code, s.url], { cwd: fileURLToPath(new URL("..", import.meta.url)) });
    expect(stdout).toBe("hello child, you are request #0");
    expect(s.requests[0]).toMatchObject({ model: "child-model", stream: true });
  });

  it("a closed server refuses connections: a retryable APICallError with no status", async () => {
    const s = await server();
    await s.close();
    const e = (await caught(async () => providerModel(s.url).doStream({ prompt }))) as APICallError;
    expect(APICallError.isInstance(e)).toBe(true);
    expect(e.statusCode).toBeUndefined();
    expect(e.isRetryable).toBe(true);
    expect(e.message).toMatch(/^Cannot connect to API: .*ECONNREFUSED/);
  });
});
