/**
 * Provider failure classes: header parsing with a fixed clock, and every class produced for real by
 * the loopback provider server through `@ai-sdk/openai-compatible`.
 */
import {
  APICallError,
  InvalidResponseDataError,
  LoadAPIKeyError,
  TypeValidationError,
  type LanguageModelV3Prompt,
  type LanguageModelV3StreamPart,
} from "@ai-sdk/provider";
import { afterEach, describe, expect, it } from "vitest";
import { classifyProviderError, describeFailure, parseDuration, parseResetTime, type ProviderFailure } from "../src/agent/provider-errors.js";
import { providerModel, reply, startProviderServer, type ProviderServer, type Reply } from "./helpers/provider-server.js";
import { caught } from "./helpers/waiting.js";

const NOW = Date.parse("2025-03-01T12:00:00.000Z");

describe("parseDuration (OpenAI x-ratelimit-reset-* values)", () => {
  it.each([
    ["20ms", 20],
    ["1s", 1000],
    ["0s", 0],
    ["59.8s", 59_800],
    ["6m0s", 360_000],
    ["6m", 360_000],
    ["1h2m3.5s", 3_723_500],
    ["1h", 3_600_000],
    ["2d", 172_800_000],
    ["1m30s500ms", 90_500],
    ["30", 30_000],
    ["1.5", 1500],
    [" 7s ", 7000],
    ["1500us", 1.5],
  ])("%s → %d ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(["", "s", "abc", "1x", "1s garbage", "-1s", "1..5s", "ms", "1h 2m"])("rejects %j", (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe("parseResetTime (fixed now)", () => {
  const at = (headers: Record<string, string>) => parseResetTime(headers, NOW);

  it("no headers, or none it knows → undefined", () => {
    expect(parseResetTime(undefined, NOW)).toBeUndefined();
    expect(at({})).toBeUndefined();
    expect(at({ "content-type": "application/json", "x-ratelimit-limit-requests": "60" })).toBeUndefined();
  });

  it("retry-after in seconds (integer and decimal)", () => {
    expect(at({ "retry-after": "20" })).toEqual({ resetAt: NOW + 20_000, source: "retry-after" });
    expect(at({ "retry-after": "1.5" })).toEqual({ resetAt: NOW + 1500, source: "retry-after" });
    expect(at({ "retry-after": "0" })).toEqual({ resetAt: NOW, source: "retry-after" });
  });

  it("retry-after as an HTTP date", () => {
    expect(at({ "retry-after": "Sat, 01 Mar 2025 12:01:30 GMT" })).toEqual({ resetAt: NOW + 90_000, source: "retry-after" });
  });

  it("retry-after-ms wins over retry-after", () => {
    expect(at({ "retry-after-ms": "250", "retry-after": "20" })).toEqual({ resetAt: NOW + 250, source: "retry-after-ms" });
    expect(at({ "retry-after-ms": "12.7" })).toEqual({ resetAt: NOW + 13, source: "retry-after-ms" });
  });

  it("retry-after wins over the provider's reset headers", () => {
    expect(at({ "retry-after": "3", "x-ratelimit-reset-requests": "6m0s", "anthropic-ratelimit-requests-reset": "2025-03-01T13:00:00Z" })).toEqual({
      resetAt: NOW + 3000,
      source: "retry-after",
    });
  });

  it("unparsable values are skipped, not trusted", () => {
    expect(at({ "retry-after-ms": "soon", "retry-after": "later", "x-ratelimit-reset-requests": "1s" })).toEqual({ resetAt: NOW + 1000, source: "x-ratelimit-reset-requests" });
    expect(at({ "retry-after": "-5" })).toBeUndefined();
    expect(at({ "retry-after": "12abc" })).toBeUndefined();
  });

  it("OpenAI: one of x-ratelimit-reset-requests / -tokens", () => {
    expect(at({ "x-ratelimit-reset-requests": "1s" })).toEqual({ resetAt: NOW + 1000, source: "x-ratelimit-reset-requests" });
    expect(at({ "x-ratelimit-reset-tokens": "6m0s" })).toEqual({ resetAt: NOW + 360_000, source: "x-ratelimit-reset-tokens" });
  });

  it("OpenAI: both present → the later of the two", () => {
    expect(at({ "x-ratelimit-reset-requests": "1h2m3.5s", "x-ratelimit-reset-tokens": "20ms" })).toEqual({ resetAt: NOW + 3_723_500, source: "x-ratelimit-reset-requests" });
    expect(at({ "x-ratelimit-reset-requests": "20ms", "x-ratelimit-reset-tokens": "6m0s" })).toEqual({ resetAt: NOW + 360_000, source: "x-ratelimit-reset-tokens" });
    expect(at({ "x-ratelimit-reset-requests": "bogus", "x-ratelimit-reset-tokens": "2s" })).toEqual({ resetAt: NOW + 2000, source: "x-ratelimit-reset-tokens" });
  });

  it("Anthropic: anthropic-ratelimit-*-reset (RFC 3339), the latest of them", () => {
    expect(at({ "anthropic-ratelimit-requests-reset": "2025-03-01T12:00:30Z" })).toEqual({ resetAt: NOW + 30_000, source: "anthropic-ratelimit-requests-reset" });
    expect(
      at({
        "anthropic-ratelimit-requests-reset": "2025-03-01T12:00:30Z",
        "anthropic-ratelimit-tokens-reset": "2025-03-01T12:02:00.500Z",
        "anthropic-ratelimit-input-tokens-reset": "2025-03-01T13:00:00+01:00",
        "anthropic-ratelimit-output-tokens-reset": "not a date",
      }),
    ).toEqual({ resetAt: NOW + 120_500, source: "anthropic-ratelimit-tokens-reset" });
  });

  it("x-ratelimit-reset: epoch seconds, epoch ms, or seconds from now, by magnitude", () => {
    expect(at({ "x-ratelimit-reset": String(NOW / 1000 + 45) })).toEqual({ resetAt: NOW + 45_000, source: "x-ratelimit-reset" });
    expect(at({ "x-ratelimit-reset": String(NOW + 4500) })).toEqual({ resetAt: NOW + 4500, source: "x-ratelimit-reset" });
    expect(at({ "x-ratelimit-reset": "45" })).toEqual({ resetAt: NOW + 45_000, source: "x-ratelimit-reset" });
    expect(at({ "x-ratelimit-reset": "86400" })).toEqual({ resetAt: NOW + 86_400_000, source: "x-ratelimit-reset" });
    expect(at({ "x-ratelimit-reset": "2025-03-01T12:00:10Z" })).toEqual({ resetAt: NOW + 10_000, source: "x-ratelimit-reset" });
    expect(at({ "x-ratelimit-reset": "garbage" })).toBeUndefined();
  });

  it("OpenAI's reset headers win over x-ratelimit-reset", () => {
    expect(at({ "x-ratelimit-reset": "999", "x-ratelimit-reset-tokens": "2s" })).toEqual({ resetAt: NOW + 2000, source: "x-ratelimit-reset-tokens" });
  });

  it("a reset in the past is clamped to now", () => {
    expect(at({ "retry-after": "Sat, 01 Mar 2025 11:00:00 GMT" })).toEqual({ resetAt: NOW, source: "retry-after" });
    expect(at({ "anthropic-ratelimit-requests-reset": "2025-03-01T11:59:00Z" })).toEqual({ resetAt: NOW, source: "anthropic-ratelimit-requests-reset" });
    expect(at({ "x-ratelimit-reset": String(NOW / 1000 - 100) })).toEqual({ resetAt: NOW, source: "x-ratelimit-reset" });
  });

  it("header names are matched case-insensitively and values trimmed", () => {
    expect(parseResetTime({ "Retry-After": " 5 " }, NOW)).toEqual({ resetAt: NOW + 5000, source: "retry-after" });
    expect(parseResetTime({ "X-RateLimit-Reset-Requests": "2s" }, NOW)).toEqual({ resetAt: NOW + 2000, source: "x-ratelimit-reset-requests" });
  });
});

/** An APICallError shaped exactly as @ai-sdk/provider-utils builds one from an OpenAI-style error response. */
function apiError(status: number, message: string, options: { headers?: Record<string, string>; code?: string; type?: string; body?: string } = {}): APICallError {
  const data = options.body === undefined ? { error: { message, type: options.type ?? null, code: options.code ?? null, param: null } } : undefined;
  return new APICallError({
    message,
    url: "http://127.0.0.1:1/v1/chat/completions",
    requestBodyValues: { model: "gpt-test" },
    statusCode: status,
    responseHeaders: options.headers ?? {},
    responseBody: options.body ?? JSON.stringify(data),
    data,
  });
}

describe("classifyProviderError (constructed errors)", () => {
  const c = (e: unknown) => classifyProviderError(e, NOW);

  it.each([500, 502, 503, 504, 529, 408, 409])("HTTP %i → transient", (status) => {
    expect(c(apiError(status, "nope"))).toEqual({ kind: "transient", status, message: "nope" });
  });

  it("5xx stays transient even with a retry-after", () => {
    expect(c(apiError(503, "busy", { headers: { "retry-after": "30" } })).kind).toBe("transient");
  });

  it("429 with a reset → quota with resetAt and the header it came from", () => {
    expect(c(apiError(429, "Rate limit reached", { headers: { "retry-after": "12" }, code: "rate_limit_exceeded" }))).toEqual({
      kind: "quota",
      status: 429,
      resetAt: NOW + 12_000,
      source: "retry-after",
      message: "Rate limit reached (rate_limit_exceeded)",
    });
  });

  it("429 without a reset → transient", () => {
    expect(c(apiError(429, "slow down"))).toEqual({ kind: "transient", status: 429, message: "slow down" });
  });

  it("a rate-limit error under another status, with a reset → quota", () => {
    const f = c(apiError(403, "Rate limit exceeded for this project", { headers: { "x-ratelimit-reset": "30" } }));
    expect(f).toMatchObject({ kind: "quota", status: 403, resetAt: NOW + 30_000, source: "x-ratelimit-reset" });
    expect(c(apiError(400, "quota hit", { type: "rate_limit_error", headers: { "retry-after": "1" } }))).toMatchObject({ kind: "quota" });
  });

  it("OpenAI insufficient_quota (billing) → fatal with a billing hint, even with reset headers", () => {
    const f = c(apiError(429, "You exceeded your current quota, please check your plan and billing details.", { code: "insufficient_quota", type: "insufficient_quota", headers: { "retry-after": "1" } }));
    expect(f.kind).toBe("fatal");
    expect(f.status).toBe(429);
    expect(f.kind === "fatal" && f.hint).toMatch(/billing/);
  });

  it("402 and Anthropic's low credit balance → fatal billing", () => {
    expect(c(apiError(402, "Payment Required"))).toMatchObject({ kind: "fatal", hint: expect.stringMatching(/billing/) as string });
    expect(c(apiError(400, "Your credit balance is too low to access the Anthropic API."))).toMatchObject({ kind: "fatal", hint: expect.stringMatching(/billing/) as string });
  });

  it("401 → fatal, hint names the API key and its env var", () => {
    const f = c(apiError(401, "Incorrect API key provided: sk-...abc.", { code: "invalid_api_key" }));
    expect(f).toMatchObject({ kind: "fatal", status: 401, message: "Incorrect API key provided: sk-...abc. (invalid_api_key)" });
    expect(f.kind === "fatal" && f.hint).toMatch(/API key.*environment variable/);
  });

  it("403 → fatal, hint names the key's access to the model", () => {
    const f = c(apiError(403, "You do not have access to this model"));
    expect(f.kind === "fatal" && f.hint).toMatch(/access to model "gpt-test"/);
  });

  it("404 → fatal, hint names the model id and the base URL", () => {
    const f = c(apiError(404, "The model `gpt-nope` does not exist", { code: "model_not_found" }));
    expect(f.kind === "fatal" && f.hint).toMatch(/model id .*gpt-test.*base URL \(http:\/\/127\.0\.0\.1:1\/v1\/chat\/completions\)/);
  });

  it("400/422 → fatal, hint says what the provider rejected", () => {
    const ctx = c(apiError(400, "This model's maximum context length is 8192 tokens.", { code: "context_length_exceeded" }));
    expect(ctx.kind === "fatal" && ctx.hint).toMatch(/context window/);
    const schema = c(apiError(400, "Invalid schema for function 'readFile': ...", { code: "invalid_function_parameters" }));
    expect(schema.kind === "fatal" && schema.hint).toMatch(/input schemas/);
    const other = c(apiError(422, "Unprocessable"));
    expect(other).toMatchObject({ kind: "fatal", status: 422, hint: expect.stringMatching(/rejected the request/) as string });
  });

  it("other 4xx → fatal with a generic hint", () => {
    expect(c(apiError(418, "teapot"))).toMatchObject({ kind: "fatal", status: 418, hint: expect.stringMatching(/HTTP 418/) as string });
  });

  it("a non-JSON error body is kept in the message", () => {
    expect(c(apiError(400, "Bad Request", { body: "model field missing" }))).toMatchObject({ kind: "fatal", message: "Bad Request: model field missing" });
  });

  it("network errors, raw or wrapped, → transient with no status", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" });
    expect(c(new TypeError("fetch failed", { cause: refused }))).toEqual({ kind: "transient", status: null, message: "fetch failed" });
    expect(c(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }))).toMatchObject({ kind: "transient", status: null });
    expect(c(new Error("socket hang up"))).toMatchObject({ kind: "transient" });
    expect(c(new TypeError("terminated", { cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }) }))).toMatchObject({ kind: "transient" });
    expect(c(new APICallError({ message: "Cannot connect to API: connect ECONNREFUSED", url: "u", requestBodyValues: {}, cause: refused, isRetryable: true }))).toMatchObject({ kind: "transient", status: null });
  });

  it("timeouts and aborts → transient (the loop checks its own abort first)", () => {
    expect(c(new DOMException("The operation timed out.", "TimeoutError"))).toMatchObject({ kind: "transient" });
    expect(c(new DOMException("This operation was aborted", "AbortError"))).toMatchObject({ kind: "transient" });
    const idle = Object.assign(new Error("the model stream sent nothing for 60000 ms"), { name: "StreamIdleError" });
    expect(c(idle)).toMatchObject({ kind: "transient", message: "the model stream sent nothing for 60000 ms" });
  });

  it("malformed provider responses → transient", () => {
    expect(c(new InvalidResponseDataError({ data: undefined, message: "Response stream ended without a finish reason." }))).toMatchObject({ kind: "transient", status: null });
    expect(c(new TypeValidationError({ value: {}, cause: new Error("bad") }))).toMatchObject({ kind: "transient" });
  });

  it("in-stream provider error objects are classified by their code/type", () => {
    expect(c({ message: "Provider overloaded", type: "overloaded_error", code: 502, param: null })).toEqual({ kind: "transient", status: 502, message: "Provider overloaded" });
    expect(c({ message: "Rate limit", type: "rate_limit_error" })).toMatchObject({ kind: "transient", status: null });
    expect(c({ message: "bad key", code: "invalid_api_key" })).toMatchObject({ kind: "fatal", hint: expect.stringMatching(/API key/) as string });
    expect(c({ message: "You exceeded your current quota", code: "insufficient_quota" })).toMatchObject({ kind: "fatal", hint: expect.stringMatching(/billing/) as string });
    expect(c({ error: { message: "ctx too long", code: "context_length_exceeded" } })).toMatchObject({ kind: "fatal", message: "ctx too long" });
  });

  it("the AI SDK's RetryError is unwrapped to its last error", () => {
    const retry = Object.assign(new Error("Failed after 3 attempts"), { name: "AI_RetryError", lastError: apiError(401, "bad key"), errors: [] });
    expect(c(retry)).toMatchObject({ kind: "fatal", status: 401 });
  });

  it("a missing API key setting → fatal naming the env var", () => {
    const f = c(new LoadAPIKeyError({ message: "OpenAI API key is missing. Pass it using the 'apiKey' parameter or the OPENAI_API_KEY environment variable." }));
    expect(f).toMatchObject({ kind: "fatal", status: null, message: expect.stringContaining("OPENAI_API_KEY") as string });
  });

  it("unknown errors (a bug in user code) → fatal with their message", () => {
    const f = c(new TypeError("Cannot read properties of undefined (reading 'path')"));
    expect(f).toMatchObject({ kind: "fatal", status: null, message: "Cannot read properties of undefined (reading 'path')" });
    expect(f.kind === "fatal" && f.hint).toMatch(/not a provider failure/);
    expect(c("a string")).toMatchObject({ kind: "fatal", message: "a string" });
    expect(c(undefined)).toMatchObject({ kind: "fatal" });
  });
});

describe("describeFailure", () => {
  it("one line per class", () => {
    const lines: [ProviderFailure, string][] = [
      [{ kind: "transient", status: 503, message: "busy" }, "transient failure (HTTP 503): busy"],
      [{ kind: "transient", status: null, message: "fetch failed" }, "transient failure (network): fetch failed"],
      [{ kind: "quota", status: 429, resetAt: NOW + 60_000, source: "retry-after", message: "slow" }, "rate limited (HTTP 429): slow; resets at 2025-03-01T12:01:00.000Z (from retry-after)"],
      [{ kind: "fatal", status: 401, message: "bad key", hint: "check the key" }, "HTTP 401: bad key"],
      [{ kind: "fatal", status: null, message: "boom", hint: "check the code" }, "boom"],
    ];
    for (const [f, line] of lines) {
      expect(describeFailure(f)).toBe(line);
      expect(describeFailure(f)).not.toContain("\n");
    }
  });
});

describe("classification of real responses through @ai-sdk/openai-compatible", () => {
  let s: ProviderServer | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  const prompt: LanguageModelV3Prompt = [{ role: "user", content: [{ type: "text", text: "hello" }] }];

  /** The failure a streamed call to a server scripted with `r` ends in, however it surfaces. */
  async function streamFailure(r: Reply): Promise<ProviderFailure> {
    s = await startProviderServer([r]);
    const now = Date.now();
    try {
      const { stream } = await providerModel(s.url, "gpt-test").doStream({ prompt });
      const reader = stream.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) throw new Error("expected the stream to fail, but it finished");
        const part: LanguageModelV3StreamPart = value;
        if (part.type === "error") return classifyProviderError(part.error, now);
      }
    } catch (e) {
      return classifyProviderError(e, now);
    }
  }

  async function generateFailure(r: Reply): Promise<{ failure: ProviderFailure; now: number }> {
    s = await startProviderServer([r]);
    const now = Date.now();
    const e = await caught(async () => providerModel(s!.url, "gpt-test").doGenerate({ prompt }));
    return { failure: classifyProviderError(e, now), now };
  }

  it.each([500, 503, 529])("HTTP %i → transient", async (status) => {
    expect(await streamFailure(reply.error(status, "down"))).toEqual({ kind: "transient", status, message: "down" });
  });

  it("429 with retry-after-ms → quota", async () => {
    const { failure, now } = await generateFailure(reply.rateLimited({ "retry-after-ms": "1500" }));
    expect(failure).toEqual({ kind: "quota", status: 429, resetAt: now + 1500, source: "retry-after-ms", message: "Rate limit reached for requests (rate_limit_exceeded)" });
  });

  it("429 with OpenAI reset headers → quota at the later one", async () => {
    const { failure, now } = await generateFailure(reply.rateLimited({ "x-ratelimit-reset-requests": "2s", "x-ratelimit-reset-tokens": "6m0s" }));
    expect(failure).toMatchObject({ kind: "quota", resetAt: now + 360_000, source: "x-ratelimit-reset-tokens" });
  });

  it("429 with an HTTP-date retry-after → quota; an unparsable one is no reset", async () => {
    const date = new Date(Math.ceil(Date.now() / 1000) * 1000 + 120_000);
    const { failure } = await generateFailure(reply.rateLimited({ "retry-after": date.toUTCString() }));
    expect(failure).toMatchObject({ kind: "quota", resetAt: date.getTime(), source: "retry-after" });
    await s?.close();
    const bad = await generateFailure(reply.rateLimited({ "retry-after": "Wed, 99 Foo" }));
    expect(bad.failure).toMatchObject({ kind: "transient", status: 429 });
  });

  it("429 with Anthropic reset headers → quota", async () => {
    const reset = new Date(Date.now() + 90_000);
    reset.setMilliseconds(0);
    const { failure } = await generateFailure(reply.rateLimited({ "anthropic-ratelimit-requests-reset": reset.toISOString().replace(".000Z", "Z") }));
    expect(failure).toMatchObject({ kind: "quota", resetAt: reset.getTime(), source: "anthropic-ratelimit-requests-reset" });
  });

  it("429 without reset headers → transient", async () => {
    expect(await streamFailure(reply.rateLimited())).toMatchObject({ kind: "transient", status: 429 });
  });

  it("insufficient_quota → fatal billing", async () => {
    const f = await streamFailure(reply.insufficientQuota());
    expect(f).toMatchObject({ kind: "fatal", status: 429, hint: expect.stringMatching(/billing/) as string });
  });

  it.each([
    [400, /rejected/],
    [401, /API key/],
    [403, /access to model "gpt-test"/],
    [404, /model id .*base URL/],
    [422, /rejected/],
  ])("HTTP %i → fatal with the provider's message and a hint", async (status, hint) => {
    const f = await streamFailure(reply.error(status, `provider says ${status}`));
    expect(f).toMatchObject({ kind: "fatal", status, message: `provider says ${status}` });
    expect(f.kind === "fatal" && f.hint).toMatch(hint);
  });

  it("a cut stream → transient with no status", async () => {
    const f = await streamFailure(reply.text("one two three", { chunks: 3, cutAfterChunks: 1 }));
    expect(f).toMatchObject({ kind: "transient", status: null });
    expect(f.message).toContain("UND_ERR_SOCKET");
  });

  it("a cut JSON reply → transient", async () => {
    expect((await generateFailure(reply.text("one two three", { cutAfterChunks: 0 }))).failure).toMatchObject({ kind: "transient", status: null });
  });

  it("a stream that ends cleanly without a finish → transient", async () => {
    const f = await streamFailure(reply.text("one two", { chunks: 2, endAfterChunks: 2 }));
    expect(f).toEqual({ kind: "transient", status: null, message: "malformed provider response: Response stream ended without a finish reason." });
  });

  it("an in-stream error event → classified by its type", async () => {
    expect(await streamFailure(reply.text("partial", { streamError: { message: "upstream timeout", type: "server_error" } }))).toEqual({
      kind: "transient",
      status: null,
      message: "upstream timeout",
    });
    expect(await streamFailure(reply.text("partial", { streamError: { message: "context too long", code: "context_length_exceeded" } }))).toMatchObject({ kind: "fatal" });
  });

  it("a stream that hangs and is cut by the caller's timeout → transient", async () => {
    s = await startProviderServer([reply.text("never", { hangAfterChunks: 0 })]);
    const e = await caught(async () => {
      const { stream } = await providerModel(s!.url).doStream({ prompt, abortSignal: AbortSignal.timeout(200) });
      const reader = stream.getReader();
      for (;;) if ((await reader.read()).done) return;
    });
    expect(classifyProviderError(e, Date.now())).toMatchObject({ kind: "transient", status: null });
  });

  it("connection refused → transient", async () => {
    s = await startProviderServer();
    const url = s.url;
    await s.close();
    const e = await caught(async () => providerModel(url).doStream({ prompt }));
    expect(classifyProviderError(e, Date.now())).toMatchObject({ kind: "transient", status: null, message: expect.stringContaining("ECONNREFUSED") as string });
  });
});
