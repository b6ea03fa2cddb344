/**
 * What a failed model call means for the run: retry it (`transient`), park until the provider's
 * reset time (`quota`), or fail the step with the provider's message and what to check (`fatal`).
 *
 * Works on what AI SDK providers throw (`APICallError` with `statusCode`, `responseHeaders`,
 * `responseBody`, `data`), on raw network errors, and on the error objects a provider sends inside
 * a stream. Pure: the caller passes `now`, so resets are computed against the caller's clock.
 *
 * Hazard: an `AbortError` (and the loop's `StreamIdleError`) is classified transient. A loop that aborted the call itself (shutdown,
 * cancel) must check its own signal before classifying, or it will retry a call it meant to stop.
 */
import { createRequire } from "node:module";
import type * as ProviderPackage from "@ai-sdk/provider";

type APICallError = ProviderPackage.APICallError;

let providerPackage: typeof ProviderPackage | undefined;

/**
 * The AI SDK's provider package, loaded at the first failure classified: a worker that runs no
 * agent, or whose models never fail, does not load it at start-up. Its `isInstance` checks test a
 * marker the package sets, not the class, so they hold for an error from any copy of the package
 * (the one a provider bundles, or the ESM build beside this CommonJS one).
 */
function sdk(): typeof ProviderPackage {
  return (providerPackage ??= createRequire(__filename)("@ai-sdk/provider") as typeof ProviderPackage);
}

export type ProviderFailure =
  | { kind: "transient"; status: number | null; message: string }
  | {
      kind: "quota";
      status: number | null;
      /** Epoch ms at which the provider said the limit resets (never before `now`). */
      resetAt: number;
      /** The response header the reset time was read from. */
      source: string;
      message: string;
    }
  | { kind: "fatal"; status: number | null; message: string; hint: string };

export interface ResetTime {
  resetAt: number;
  source: string;
}

type Headers = Record<string, string | undefined>;

/** Codes (on an error or anywhere in its `cause` chain) of a connection that failed or broke. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "ConnectionRefused",
  "ConnectionClosed",
  "FailedToOpenSocket",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "UND_ERR_ABORTED",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_CONNECT_TIMEOUT",
]);

const NETWORK_MESSAGE = /fetch failed|failed to fetch|socket hang up|other side closed|^terminated$|network ?error|connection (?:reset|refused|closed)/i;

const BILLING_HINT =
  "check the provider account's billing: plan, credit balance, payment method and spend limit (retrying will not help until it is fixed)";

export function classifyProviderError(error: unknown, now: number): ProviderFailure {
  const e = unwrapRetryError(error);
  const {
    APICallError,
    EmptyResponseBodyError,
    InvalidPromptError,
    InvalidResponseDataError,
    JSONParseError,
    LoadAPIKeyError,
    LoadSettingError,
    NoContentGeneratedError,
    NoSuchModelError,
    TypeValidationError,
    UnsupportedFunctionalityError,
  } = sdk();

  if (APICallError.isInstance(e)) return classifyApiCallError(e, now);
  if (isAbortLike(e)) return { kind: "transient", status: null, message: messageOf(e, "the model call timed out or was aborted") };
  if (isNetworkError(e)) return { kind: "transient", status: null, message: messageOf(e, "network error") };

  // The provider answered 200 but the body or stream was not what the protocol promises.
  if (
    InvalidResponseDataError.isInstance(e) ||
    JSONParseError.isInstance(e) ||
    TypeValidationError.isInstance(e) ||
    EmptyResponseBodyError.isInstance(e) ||
    NoContentGeneratedError.isInstance(e)
  ) {
    return { kind: "transient", status: null, message: `malformed provider response: ${messageOf(e, "unknown")}` };
  }

  if (LoadAPIKeyError.isInstance(e) || LoadSettingError.isInstance(e)) {
    return { kind: "fatal", status: null, message: messageOf(e, "missing provider setting"), hint: "set the provider's API key environment variable (or pass apiKey to the provider) in the worker's environment" };
  }
  if (NoSuchModelError.isInstance(e)) {
    return { kind: "fatal", status: null, message: messageOf(e, "no such model"), hint: "check the model id passed to the provider" };
  }
  if (InvalidPromptError.isInstance(e) || UnsupportedFunctionalityError.isInstance(e)) {
    return { kind: "fatal", status: null, message: messageOf(e, "invalid request"), hint: "the provider package refused the request before sending it: check the transcript's content types and the call options this model supports" };
  }

  const inStream = providerErrorObject(e);
  if (inStream) return classifyStreamError(inStream);

  return {
    kind: "fatal",
    status: null,
    message: messageOf(e, "unknown error"),
    hint: "this is not a provider failure: check the code that raised it (a tool, a hook, or the model wrapper)",
  };
}

/**
 * One line for logs, events and step errors: the failure and the provider's message. A fatal
 * failure's `hint` is not included: it belongs in the error's `fix`.
 */
export function describeFailure(f: ProviderFailure): string {
  const where = f.status === null ? "" : ` (HTTP ${f.status})`;
  switch (f.kind) {
    case "transient":
      return `transient failure${f.status === null ? " (network)" : where}: ${f.message}`;
    case "quota":
      return `rate limited${where}: ${f.message}; resets at ${new Date(f.resetAt).toISOString()} (from ${f.source})`;
    case "fatal":
      return f.status === null ? f.message : `HTTP ${f.status}: ${f.message}`;
  }
}

/**
 * The reset time a rate-limited response announces, in order of authority: `retry-after-ms`,
 * `retry-after` (seconds or HTTP date), OpenAI `x-ratelimit-reset-requests`/`-tokens` (durations;
 * the later of the two), Anthropic `anthropic-ratelimit-*-reset` (RFC 3339; the latest), then
 * `x-ratelimit-reset` (epoch seconds, epoch ms, or seconds from now, told apart by magnitude).
 * Unparsable values are skipped. A reset in the past is clamped to `now`.
 */
export function parseResetTime(headers: Headers | undefined, now: number): ResetTime | undefined {
  if (!headers) return undefined;
  const h: Headers = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) h[k.toLowerCase()] = v.trim();
  const at = (t: number, source: string): ResetTime => ({ resetAt: Math.max(now, Math.round(t)), source });

  const ms = h["retry-after-ms"];
  if (ms !== undefined && isDecimal(ms)) return at(now + Number(ms), "retry-after-ms");

  const ra = h["retry-after"];
  if (ra !== undefined) {
    if (isDecimal(ra)) return at(now + Number(ra) * 1000, "retry-after");
    const date = parseHttpDate(ra);
    if (date !== undefined) return at(date, "retry-after");
  }

  const later = (candidates: (ResetTime | undefined)[]): ResetTime | undefined =>
    candidates.reduce<ResetTime | undefined>((best, c) => (c && (!best || c.resetAt > best.resetAt) ? c : best), undefined);

  const openai = later(
    ["x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"].map((name) => {
      const v = h[name];
      const d = v === undefined ? undefined : parseDuration(v);
      return d === undefined ? undefined : at(now + d, name);
    }),
  );
  if (openai) return openai;

  const anthropic = later(
    Object.keys(h)
      .filter((name) => /^anthropic-ratelimit-[a-z-]+-reset$/.test(name))
      .sort()
      .map((name) => {
        const t = parseIsoDate(h[name] ?? "");
        return t === undefined ? undefined : at(t, name);
      }),
  );
  if (anthropic) return anthropic;

  const reset = h["x-ratelimit-reset"];
  if (reset !== undefined) {
    if (isDecimal(reset)) {
      const n = Number(reset);
      if (n >= 1e12) return at(n, "x-ratelimit-reset");
      if (n >= 1e9) return at(n * 1000, "x-ratelimit-reset");
      return at(now + n * 1000, "x-ratelimit-reset");
    }
    const t = parseIsoDate(reset) ?? parseHttpDate(reset);
    if (t !== undefined) return at(t, "x-ratelimit-reset");
    const d = parseDuration(reset);
    if (d !== undefined) return at(now + d, "x-ratelimit-reset");
  }
  return undefined;
}

/**
 * A Go-style duration as OpenAI sends in `x-ratelimit-reset-*` ("20ms", "1s", "6m0s", "1h2m3.5s",
 * also "2d"), or a bare number of seconds, in ms. Undefined when it is neither.
 */
export function parseDuration(text: string): number | undefined {
  const s = text.trim();
  if (s === "") return undefined;
  if (isDecimal(s)) return Number(s) * 1000;
  const unitMs: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, µs: 0.001, ns: 0.000001 };
  const part = /(\d+(?:\.\d+)?)(ms|us|µs|ns|d|h|m|s)/y;
  let total = 0;
  let pos = 0;
  while (pos < s.length) {
    part.lastIndex = pos;
    const m = part.exec(s);
    if (!m) return undefined;
    total += Number(m[1]) * (unitMs[m[2] ?? ""] ?? Number.NaN);
    pos = part.lastIndex;
  }
  return Number.isFinite(total) ? total : undefined;
}

function classifyApiCallError(e: APICallError, now: number): ProviderFailure {
  const status = e.statusCode ?? null;
  const info = errorInfo(e.data) ?? errorInfo(parseJson(e.responseBody));
  const message = apiMessage(e, info);

  // No status, or a 2xx: the connection failed, the stream was cut, or the body was unreadable.
  if (status === null || (status >= 200 && status < 300)) return { kind: "transient", status: null, message };

  if (status === 402 || (status < 500 && isBilling(info, message))) return { kind: "fatal", status, message, hint: BILLING_HINT };

  if (status === 429 || isRateLimit(info, message)) {
    const reset = parseResetTime(e.responseHeaders, now);
    if (reset) return { kind: "quota", status, resetAt: reset.resetAt, source: reset.source, message };
    return { kind: "transient", status, message };
  }

  if (status >= 500 || status === 408 || status === 409 || status === 425) return { kind: "transient", status, message };

  return { kind: "fatal", status, message, hint: fatalHint(status, info, message, e) };
}

function fatalHint(status: number, info: ErrorInfo | undefined, message: string, e: APICallError): string {
  const model = modelOf(e.requestBodyValues);
  const modelText = model === undefined ? "the model" : `model "${model}"`;
  switch (status) {
    case 401:
      return "check the API key: the provider's key environment variable (e.g. OPENAI_API_KEY) must be set in the worker's environment, current, and issued for this provider";
    case 403:
      return `check that the API key has access to ${modelText} (organization, project and region permissions)`;
    case 404:
      return `check the model id (${modelText}) and the provider's base URL${e.url ? ` (${e.url})` : ""}`;
    case 413:
      return "the request is too large for the provider: shorten the transcript or the tool results it carries";
    case 400:
    case 422: {
      const text = `${info?.code ?? ""} ${info?.type ?? ""} ${message}`;
      if (/context[_ ]length|context window|maximum context|too many tokens|prompt is too long|max_tokens/i.test(text)) {
        return "the transcript exceeds the model's context window: lower maxTurns, shorten tool results, or use a model with a larger context";
      }
      if (/schema|tool|function/i.test(text)) {
        return "the provider rejected the tool definitions or a tool call: check the tools' input schemas against what this provider accepts";
      }
      return "the provider rejected the request: check the tool input schemas, the transcript's size against the context length, and the call options this model supports";
    }
    default:
      return `the provider refused the request with HTTP ${status}: check the request against the provider's documentation for this status`;
  }
}

interface ErrorInfo {
  message?: string;
  type?: string;
  code?: string;
  /** A numeric `code` some providers put in in-stream errors (an HTTP status). */
  status?: number;
}

/** `{ error: { message, type, code } }` (OpenAI, Anthropic), or the inner object itself. */
function errorInfo(data: unknown): ErrorInfo | undefined {
  if (data === null || typeof data !== "object") return undefined;
  const d = data as Record<string, unknown>;
  const inner = d.error !== null && typeof d.error === "object" ? (d.error as Record<string, unknown>) : d;
  const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
  const info: ErrorInfo = {
    message: str(inner.message),
    type: str(inner.type),
    code: str(inner.code) ?? str(inner.status),
    status: typeof inner.code === "number" ? inner.code : typeof inner.status === "number" ? inner.status : undefined,
  };
  return info.message || info.type || info.code || info.status !== undefined ? info : undefined;
}

/** A provider's error object delivered as a stream `error` part (not an Error instance). */
function providerErrorObject(e: unknown): ErrorInfo | undefined {
  if (e === null || typeof e !== "object" || e instanceof Error) return undefined;
  const info = errorInfo(e);
  return info?.message !== undefined || info?.code !== undefined || info?.type !== undefined ? info : undefined;
}

function classifyStreamError(info: ErrorInfo): ProviderFailure {
  const message = info.message ?? info.code ?? info.type ?? "provider error";
  const status = info.status !== undefined && info.status >= 400 && info.status < 600 ? info.status : null;
  const tag = `${info.code ?? ""} ${info.type ?? ""}`;
  if (isBilling(info, message)) return { kind: "fatal", status, message, hint: BILLING_HINT };
  if (/invalid_api_key|authentication/i.test(tag) || status === 401) {
    return { kind: "fatal", status, message, hint: "check the API key: the provider's key environment variable must be set, current, and issued for this provider" };
  }
  if (/permission/i.test(tag) || status === 403) return { kind: "fatal", status, message, hint: "check that the API key has access to the model" };
  if (/model_not_found|not_found/i.test(tag) || status === 404) return { kind: "fatal", status, message, hint: "check the model id and the provider's base URL" };
  if (/invalid_request|context_length/i.test(tag) || status === 400 || status === 422) {
    return { kind: "fatal", status, message, hint: "the provider rejected the request: check the tool input schemas and the transcript's size against the context length" };
  }
  // Rate limits without headers, overloads, server errors, and anything unrecognised mid-stream.
  return { kind: "transient", status, message };
}

function isBilling(info: ErrorInfo | undefined, message: string): boolean {
  if (info?.code === "insufficient_quota" || info?.type === "insufficient_quota") return true;
  return /insufficient[_ ]quota|exceeded your current quota|credit balance is too low|billing/i.test(message);
}

function isRateLimit(info: ErrorInfo | undefined, message: string): boolean {
  const tag = `${info?.code ?? ""} ${info?.type ?? ""}`;
  return /rate[_ ]?limit|resource_exhausted|quota/i.test(tag) || /rate[ -]?limit/i.test(message);
}

function apiMessage(e: APICallError, info: ErrorInfo | undefined): string {
  let text = e.message || info?.message || `HTTP ${e.statusCode ?? "error"}`;
  if (info?.code && !text.includes(info.code)) text += ` (${info.code})`;
  // A body the error schema could not parse carries the provider's words; the message is only the status text.
  if (e.data === undefined && info === undefined && typeof e.responseBody === "string" && e.responseBody.trim() !== "") {
    text += `: ${e.responseBody.trim().slice(0, 300)}`;
  }
  const network = findNetworkCause(e.cause);
  if (network && !text.includes(network)) text += ` (${network})`;
  return text;
}

/** Aborts and timeouts, including the loop's own idle-stream cut (`StreamIdleError`). */
function isAbortLike(e: unknown): boolean {
  return e instanceof Error && (e.name === "AbortError" || e.name === "TimeoutError" || e.name === "StreamIdleError");
}

function isNetworkError(e: unknown): boolean {
  if (findNetworkCause(e) !== undefined) return true;
  return e instanceof Error && NETWORK_MESSAGE.test(e.message);
}

/** The first network error code in `e`'s cause chain. */
function findNetworkCause(e: unknown): string | undefined {
  const seen = new Set<unknown>();
  let cur: unknown = e;
  while (cur instanceof Error && !seen.has(cur) && seen.size < 16) {
    seen.add(cur);
    const code = (cur as { code?: unknown }).code;
    if (typeof code === "string" && NETWORK_CODES.has(code)) return code;
    cur = cur.cause;
  }
  return undefined;
}

/** The AI SDK's `RetryError` (from generateText/streamText) wraps the error that decided the outcome. */
function unwrapRetryError(e: unknown): unknown {
  if (e instanceof Error && e.name === "AI_RetryError" && "lastError" in e) return (e as { lastError: unknown }).lastError;
  return e;
}

function messageOf(e: unknown, fallback: string): string {
  if (e instanceof Error) return e.message || e.name || fallback;
  if (typeof e === "string") return e || fallback;
  try {
    return JSON.stringify(e) ?? fallback;
  } catch {
    return fallback;
  }
}

function modelOf(body: unknown): string | undefined {
  if (body === null || typeof body !== "object") return undefined;
  const m = (body as { model?: unknown }).model;
  return typeof m === "string" ? m : undefined;
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined || text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isDecimal(s: string): boolean {
  return /^\d+(?:\.\d+)?$/.test(s);
}

/** An IMF-fixdate / RFC 850 / asctime date as `Retry-After` allows; never a bare number. */
function parseHttpDate(s: string): number | undefined {
  if (!/[a-z]/i.test(s)) return undefined;
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : t;
}

/** An RFC 3339 timestamp ("2024-05-01T12:00:30Z", with optional fraction and offset). */
function parseIsoDate(s: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/i.test(s)) return undefined;
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : t;
}
