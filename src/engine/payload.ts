import { SteadError } from "../errors.js";

export const DEFAULT_PAYLOAD_LIMIT = 1024 * 1024;

/**
 * Encodes a value for the journal. Replay must return exactly what the first execution saw, so
 * only values that survive a JSON round trip are accepted (plain objects, arrays, strings, finite
 * numbers, booleans, null; `undefined` is stored as SQL NULL). Anything else fails closed, naming
 * `what` (the step), and so does a payload over `limit` bytes: never truncated.
 */
export function encodePayload(value: unknown, what: string, limit: number, ids: { runId?: string; stepId?: string } = {}): string | null {
  if (value === undefined) return null;
  const problem = findUnserializable(value, "$", new Set());
  if (problem) {
    throw new SteadError("STEAD_NOT_SERIALIZABLE", `${what} produced a value that cannot be journaled: ${problem}`, {
      ...ids,
      fix: "return plain JSON data (objects, arrays, strings, finite numbers, booleans, null); convert dates to ISO strings",
    });
  }
  const text = JSON.stringify(value);
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > limit) {
    throw new SteadError("STEAD_PAYLOAD_TOO_LARGE", `${what} produced ${bytes} bytes of JSON, over the ${limit}-byte payload ceiling`, {
      ...ids,
      bytes,
      limit,
      fix: "store large data elsewhere (a file, a blob store) and journal a reference to it, or raise payloadLimitBytes",
    });
  }
  return text;
}

export function decodePayload<T = unknown>(text: string | null): T {
  return (text === null ? undefined : JSON.parse(text)) as T;
}

function findUnserializable(v: unknown, path: string, seen: Set<object>): string | undefined {
  switch (typeof v) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(v) ? undefined : `${path} is ${String(v)}`;
    case "undefined":
      return path === "$" ? undefined : `${path} is undefined`;
    case "bigint":
      return `${path} is a bigint`;
    case "function":
      return `${path} is a function`;
    case "symbol":
      return `${path} is a symbol`;
    case "object": {
      if (v === null) return undefined;
      if (seen.has(v)) return `${path} is a circular reference`;
      if (Array.isArray(v)) {
        seen.add(v);
        for (let i = 0; i < v.length; i++) {
          const p = findUnserializable(v[i] === undefined ? null : v[i], `${path}[${i}]`, seen);
          if (p) return p;
        }
        seen.delete(v);
        return undefined;
      }
      const proto: unknown = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) {
        const name = (v as { constructor?: { name?: string } }).constructor?.name ?? "object";
        return `${path} is a ${name}, not a plain object`;
      }
      seen.add(v);
      for (const [k, x] of Object.entries(v)) {
        if (x === undefined) continue;
        const p = findUnserializable(x, `${path}.${k}`, seen);
        if (p) return p;
      }
      seen.delete(v);
      return undefined;
    }
  }
  return `${path} cannot be serialized`;
}

/** An error as journaled: enough to rethrow an equivalent error on replay. */
export interface ErrorRecord {
  name: string;
  message: string;
  code?: string;
  /** What the user can do (a SteadError's `fix`), kept so `stead why` can say it long after. */
  fix?: string;
  /** The step the error came from, when it names one (a step's failure rethrown by the run). */
  stepId?: string;
  stack?: string;
}

export function errorRecord(e: unknown): ErrorRecord {
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code;
    const fix = (e as { fix?: unknown }).fix;
    const stepId = (e as { stepId?: unknown }).stepId;
    return {
      name: e.name,
      message: e.message,
      ...(typeof code === "string" ? { code } : {}),
      ...(typeof fix === "string" ? { fix } : {}),
      ...(typeof stepId === "string" ? { stepId } : {}),
      ...(e.stack ? { stack: e.stack.split("\n").slice(0, 8).join("\n") } : {}),
    };
  }
  return { name: "Error", message: typeof e === "string" ? e : JSON.stringify(e) ?? String(e) };
}

export function encodeError(e: unknown): string {
  return JSON.stringify(errorRecord(e)).slice(0, 64 * 1024);
}

export function decodeError(text: string | null): ErrorRecord {
  if (!text) return { name: "Error", message: "unknown error" };
  try {
    return JSON.parse(text) as ErrorRecord;
  } catch {
    return { name: "Error", message: text };
  }
}
