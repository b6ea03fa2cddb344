/**
 * A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions protocol the way
 * `@ai-sdk/openai-compatible` consumes it (`POST {baseURL}/chat/completions`, JSON or SSE), scripted
 * per test with a queue of replies and/or a handler. Outages are real: error statuses with real
 * headers, sockets destroyed mid-stream, responses that never end.
 *
 * The script lives in the test process; a child worker process only needs `server.url` and
 * `providerModel(url, modelId)`.
 *
 * Hazard: a hanging reply holds its socket until the client aborts or `close()` runs; every test
 * that starts a server must close it (afterEach), or vitest waits on the open handle.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { LanguageModelV3 } from "@ai-sdk/provider";

/** A message as the client sent it (OpenAI wire shape). */
export interface WireMessage {
  role: string;
  content?: unknown;
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
  [key: string]: unknown;
}

/** A tool as the client declared it (OpenAI wire shape). */
export interface WireTool {
  type: string;
  function: { name: string; description?: string; parameters?: unknown; strict?: boolean };
}

export interface RecordedRequest {
  /** 0-based position among all requests this server received. */
  index: number;
  method: string;
  path: string;
  /** Lower-case header names. */
  headers: Record<string, string>;
  /** The parsed JSON body; null when the body was not JSON. */
  body: Record<string, unknown> | null;
  model: string | undefined;
  messages: WireMessage[];
  /** [] when the request declared no tools. */
  tools: WireTool[];
  stream: boolean;
  /** `stream_options.include_usage`: the client asked for a usage chunk at the end of the stream. */
  includeUsage: boolean;
  /** Becomes true if the client went away before the reply was complete (abort, timeout). */
  clientClosed: boolean;
}

export interface ScriptedToolCall {
  id: string;
  name: string;
  /** JSON-encoded by the server. */
  args?: unknown;
  /** Sent verbatim instead of `args` (e.g. malformed JSON). */
  rawArguments?: string;
}

export interface ReplyUsage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens?: number;
  reasoningTokens?: number;
}

/** A 200 response: text and/or tool calls, streamed as SSE when the request asked for it. */
export interface CompletionReply {
  kind?: "completion";
  text?: string;
  toolCalls?: ScriptedToolCall[];
  /** Default: "tool_calls" when there are tool calls, else "stop". */
  finishReason?: string;
  /** Sent in the JSON body; in a stream only when the client set `stream_options.include_usage` (as OpenAI does). */
  usage?: ReplyUsage;
  /** How many SSE chunks the text is split into (default 1). */
  chunks?: number;
  /** The text's SSE chunks exactly (their concatenation is `text`); instead of `chunks`. */
  pieces?: readonly string[];
  /** Pause between SSE events. */
  chunkDelayMs?: number;
  /**
   * Streamed only: an in-stream error event `data: {"error": {...}}` sent in place of the finish
   * event (as some providers do when they fail after the 200). JSON replies ignore it.
   */
  streamError?: { message: string; type?: string | null; code?: string | number | null };
  /** Pause before the status line and headers are sent. */
  delayMs?: number;
  /** Destroy the socket after this many SSE events (a JSON reply: after half its body). */
  cutAfterChunks?: number;
  /** Stop writing after this many SSE events and keep the connection open until the client or close() ends it. */
  hangAfterChunks?: number;
  /**
   * End the response cleanly after this many SSE events (no finish event, no [DONE]), as a proxy
   * that gives up might. A JSON reply: ends cleanly after half its body.
   */
  endAfterChunks?: number;
  headers?: Record<string, string>;
  /** Response id and model echoed in the body (defaults: `chatcmpl-<index>`, the requested model). */
  id?: string;
  model?: string;
}

/** A non-2xx response with an OpenAI-style error body `{ error: { message, type, code, param } }`. */
export interface ErrorReply {
  kind: "error";
  status: number;
  headers?: Record<string, string>;
  error?: { message: string; type?: string | null; code?: string | number | null; param?: string | null };
  /** Sent verbatim instead of the JSON error body. */
  rawBody?: string;
  delayMs?: number;
}

export type Reply = CompletionReply | ErrorReply;
export type ReplyHandler = (req: RecordedRequest) => Reply | Promise<Reply>;

/** Reply builders, for readable scripts. */
export const reply = {
  text(text: string, options: Omit<CompletionReply, "kind" | "text"> = {}): CompletionReply {
    return { ...options, text };
  },
  /** Text streamed as exactly these chunks. */
  pieces(pieces: readonly string[], options: Omit<CompletionReply, "kind" | "text" | "pieces" | "chunks"> = {}): CompletionReply {
    return { ...options, text: pieces.join(""), pieces };
  },
  toolCalls(calls: ScriptedToolCall[], options: Omit<CompletionReply, "kind" | "toolCalls"> = {}): CompletionReply {
    return { ...options, toolCalls: calls };
  },
  error(status: number, message: string, options: Omit<ErrorReply, "kind" | "status"> & { type?: string; code?: string } = {}): ErrorReply {
    const { type, code, ...rest } = options;
    return { error: { message, type: type ?? defaultErrorType(status), code: code ?? null, param: null }, ...rest, kind: "error", status };
  },
  /** A 429 with the given reset headers (none: a 429 that says nothing about when to come back). */
  rateLimited(headers: Record<string, string> = {}, message = "Rate limit reached for requests"): ErrorReply {
    return { kind: "error", status: 429, headers, error: { message, type: "requests", code: "rate_limit_exceeded", param: null } };
  },
  /** OpenAI's billing failure: a 429 whose body says `insufficient_quota`. */
  insufficientQuota(): ErrorReply {
    return {
      kind: "error",
      status: 429,
      error: {
        message: "You exceeded your current quota, please check your plan and billing details.",
        type: "insufficient_quota",
        code: "insufficient_quota",
        param: null,
      },
    };
  },
};

function defaultErrorType(status: number): string {
  if (status === 401) return "invalid_request_error";
  if (status === 429) return "requests";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

export interface ProviderServer {
  /** The baseURL for `createOpenAICompatible` (ends in /v1, no trailing slash). */
  readonly url: string;
  readonly requests: readonly RecordedRequest[];
  /** Errors thrown by a handler (each also answered with a 400 naming it). */
  readonly handlerErrors: readonly Error[];
  /** Queued replies are used first, in order; then the handler. */
  enqueue(...replies: Reply[]): void;
  setHandler(handler: ReplyHandler | undefined): void;
  /** Resolves once `count` requests have arrived (bounded wait). */
  waitForRequests(count: number, timeoutMs?: number): Promise<void>;
  /** Ends every open socket (hanging replies included) and stops listening. Idempotent. */
  close(): Promise<void>;
}

export type ProviderScript = ReplyHandler | readonly Reply[];

export async function startProviderServer(script?: ProviderScript): Promise<ProviderServer> {
  const requests: RecordedRequest[] = [];
  const handlerErrors: Error[] = [];
  const queue: Reply[] = Array.isArray(script) ? [...(script as readonly Reply[])] : [];
  let handler: ReplyHandler | undefined = typeof script === "function" ? script : undefined;
  const sockets = new Set<Socket>();
  const closing = new AbortController();
  const arrivals = new Set<() => void>();
  // A response's "close" fires once; waits that start after it must not wait for it.
  const closedResponses = new WeakSet<ServerResponse>();

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      // Writing to a socket the client or close() destroyed is expected; anything else is a server bug.
      if (!res.destroyed) res.destroy(e instanceof Error ? e : new Error(String(e)));
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const rec = record(req, raw);
    requests.push(rec);
    for (const notify of arrivals) notify();
    res.on("close", () => {
      closedResponses.add(res);
      if (!res.writableFinished) rec.clientClosed = true;
    });

    if (req.method !== "POST" || !rec.path.endsWith("/chat/completions")) {
      return sendError(res, { kind: "error", status: 404, error: { message: `provider test server: no route ${req.method} ${rec.path}`, type: "invalid_request_error" } });
    }
    if (rec.body === null) {
      return sendError(res, { kind: "error", status: 400, error: { message: "provider test server: request body is not JSON", type: "invalid_request_error" } });
    }

    let r: Reply;
    try {
      const next = queue.shift();
      if (next !== undefined) r = next;
      else if (handler !== undefined) r = await handler(rec);
      else r = { kind: "error", status: 400, error: { message: `provider test server: no reply scripted for request #${rec.index}`, type: "invalid_request_error" } };
    } catch (e) {
      const err = e instanceof Error ? e : new Error(String(e));
      handlerErrors.push(err);
      r = { kind: "error", status: 400, error: { message: `provider test server: handler threw for request #${rec.index}: ${err.message}`, type: "invalid_request_error" } };
    }

    if (r.delayMs !== undefined && r.delayMs > 0) await sleep(r.delayMs, res);
    if (res.destroyed) return;
    if (r.kind === "error") return sendError(res, r);
    if (rec.stream) return sendStream(res, rec, r);
    return sendJson(res, rec, r);
  }

  function sendError(res: ServerResponse, r: ErrorReply): void {
    const body = r.rawBody ?? JSON.stringify({ error: { message: "error", type: null, code: null, param: null, ...r.error } });
    res.writeHead(r.status, { "content-type": r.rawBody === undefined ? "application/json" : "text/plain", ...r.headers });
    res.end(body);
  }

  async function sendJson(res: ServerResponse, rec: RecordedRequest, r: CompletionReply): Promise<void> {
    const toolCalls = r.toolCalls ?? [];
    const body = JSON.stringify({
      id: r.id ?? `chatcmpl-${rec.index}`,
      object: "chat.completion",
      created: 1_700_000_000,
      model: r.model ?? rec.model ?? "unknown",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: r.text ?? null,
            ...(toolCalls.length > 0
              ? { tool_calls: toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: argumentsText(c) } })) }
              : {}),
          },
          finish_reason: finishReasonOf(r),
        },
      ],
      ...(r.usage ? { usage: wireUsage(r.usage) } : {}),
    });
    const cut = r.cutAfterChunks !== undefined;
    const hang = r.hangAfterChunks !== undefined;
    const truncate = r.endAfterChunks !== undefined;
    if (!cut && !hang && !truncate) {
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...r.headers });
      res.end(body);
      return;
    }
    // No content-length: the client cannot know the body is short until the socket dies.
    res.writeHead(200, { "content-type": "application/json", ...r.headers });
    const half = body.slice(0, Math.floor(body.length / 2));
    if (truncate && !cut && !hang) {
      res.end(half);
      return;
    }
    res.write(half);
    if (cut) return destroyAfterFlush(res);
    await untilClosed(res);
  }

  async function sendStream(res: ServerResponse, rec: RecordedRequest, r: CompletionReply): Promise<void> {
    const events = streamEvents(rec, r);
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", ...r.headers });
    res.flushHeaders();
    for (let i = 0; i < events.length; i++) {
      if (r.cutAfterChunks !== undefined && i >= r.cutAfterChunks) return destroyAfterFlush(res);
      if (r.hangAfterChunks !== undefined && i >= r.hangAfterChunks) return untilClosed(res);
      if (r.endAfterChunks !== undefined && i >= r.endAfterChunks) break;
      if (i > 0 && r.chunkDelayMs !== undefined && r.chunkDelayMs > 0) await sleep(r.chunkDelayMs, res);
      if (res.destroyed) return;
      res.write(`data: ${events[i]}\n\n`);
    }
    if (r.cutAfterChunks !== undefined) return destroyAfterFlush(res);
    if (r.hangAfterChunks !== undefined) return untilClosed(res);
    res.end();
  }

  function untilClosed(res: ServerResponse): Promise<void> {
    if (closedResponses.has(res) || res.destroyed || closing.signal.aborted) {
      res.destroy();
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = (): void => {
        closing.signal.removeEventListener("abort", done);
        res.destroy();
        resolve();
      };
      res.once("close", done);
      closing.signal.addEventListener("abort", done, { once: true });
    });
  }

  /** Destroys the socket once what was written has left, so the client sees the first K events, then a reset. */
  function destroyAfterFlush(res: ServerResponse): void {
    res.write("", () => res.socket?.destroy());
  }

  /** Sleeps, cut short if the client goes away or the server closes. */
  function sleep(ms: number, res: ServerResponse): Promise<void> {
    if (closedResponses.has(res) || closing.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        res.off("close", done);
        closing.signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      res.once("close", done);
      closing.signal.addEventListener("abort", done, { once: true });
    });
  }

  function record(req: IncomingMessage, raw: string): RecordedRequest {
    let body: Record<string, unknown> | null = null;
    try {
      const parsed: unknown = JSON.parse(raw);
      if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
    } catch {
      body = null;
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(", ") : v;
    const streamOptions = body?.stream_options as { include_usage?: unknown } | undefined;
    return {
      index: requests.length,
      method: req.method ?? "GET",
      path: (req.url ?? "/").split("?")[0] ?? "/",
      headers,
      body,
      model: typeof body?.model === "string" ? body.model : undefined,
      messages: Array.isArray(body?.messages) ? (body.messages as WireMessage[]) : [],
      tools: Array.isArray(body?.tools) ? (body.tools as WireTool[]) : [],
      stream: body?.stream === true,
      includeUsage: streamOptions?.include_usage === true,
      clientClosed: false,
    };
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    handlerErrors,
    enqueue(...replies) {
      queue.push(...replies);
    },
    setHandler(h) {
      handler = h;
    },
    async waitForRequests(count, timeoutMs = 20_000) {
      if (requests.length >= count) return;
      await new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (requests.length < count) return;
          clearTimeout(timer);
          arrivals.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          arrivals.delete(check);
          reject(new Error(`provider test server: timed out after ${timeoutMs} ms waiting for ${count} requests (got ${requests.length})`));
        }, timeoutMs);
        arrivals.add(check);
      });
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing.abort();
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
      return closed;
    },
  };
}

/** The model a test or a child fixture uses to talk to a provider server at `baseURL`. */
export function providerModel(baseURL: string, modelId = "test-model", options: { apiKey?: string; name?: string } = {}): LanguageModelV3 {
  return createOpenAICompatible({
    name: options.name ?? "test-provider",
    baseURL,
    apiKey: options.apiKey ?? "test-key",
    // Asks for the usage chunk at the end of a stream, as real OpenAI-compatible clients do.
    includeUsage: true,
  }).chatModel(modelId);
}

function finishReasonOf(r: CompletionReply): string {
  return r.finishReason ?? ((r.toolCalls?.length ?? 0) > 0 ? "tool_calls" : "stop");
}

function argumentsText(c: ScriptedToolCall): string {
  return c.rawArguments ?? JSON.stringify(c.args ?? {});
}

function wireUsage(u: ReplyUsage): Record<string, unknown> {
  return {
    prompt_tokens: u.promptTokens,
    completion_tokens: u.completionTokens,
    total_tokens: u.promptTokens + u.completionTokens,
    ...(u.cachedTokens !== undefined ? { prompt_tokens_details: { cached_tokens: u.cachedTokens } } : {}),
    ...(u.reasoningTokens !== undefined ? { completion_tokens_details: { reasoning_tokens: u.reasoningTokens } } : {}),
  };
}

/**
 * The SSE `data:` payloads of a streamed reply, in order: text chunks, then per tool call a header
 * event (id, name, empty arguments) and its arguments in two halves, then the finish event (or the
 * scripted in-stream error), then
 * (if asked for) the usage event with empty choices, then `[DONE]`.
 */
function streamEvents(rec: RecordedRequest, r: CompletionReply): string[] {
  const id = r.id ?? `chatcmpl-${rec.index}`;
  const model = r.model ?? rec.model ?? "unknown";
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): string =>
    JSON.stringify({ id, object: "chat.completion.chunk", created: 1_700_000_000, model, choices, ...extra });
  const delta = (d: Record<string, unknown>): string => chunk([{ index: 0, delta: d, finish_reason: null }]);
  const events: string[] = [];
  const text = r.text ?? "";
  if (text.length > 0) {
    (r.pieces ?? splitText(text, Math.max(1, r.chunks ?? 1))).forEach((piece, i) => {
      events.push(delta(i === 0 ? { role: "assistant", content: piece } : { content: piece }));
    });
  }
  (r.toolCalls ?? []).forEach((c, index) => {
    const args = argumentsText(c);
    const half = Math.ceil(args.length / 2);
    events.push(delta({ ...(index === 0 && text.length === 0 ? { role: "assistant" } : {}), tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: "" } }] }));
    events.push(delta({ tool_calls: [{ index, function: { arguments: args.slice(0, half) } }] }));
    if (half < args.length) events.push(delta({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] }));
  });
  if (r.streamError) events.push(JSON.stringify({ error: { type: null, code: null, param: null, ...r.streamError } }));
  else events.push(chunk([{ index: 0, delta: {}, finish_reason: finishReasonOf(r) }]));
  if (rec.includeUsage && r.usage) events.push(chunk([], { usage: wireUsage(r.usage) }));
  events.push("[DONE]");
  return events;
}

/** Splits into `n` non-empty pieces of near-equal length (fewer if the text is shorter than n). */
function splitText(text: string, n: number): string[] {
  const count = Math.min(n, text.length);
  const pieces: string[] = [];
  for (let i = 0; i < count; i++) pieces.push(text.slice(Math.floor((i * text.length) / count), Math.floor(((i + 1) * text.length) / count)));
  return pieces;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
