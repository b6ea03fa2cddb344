import { SteadError, errorMessage, isSteadCode } from "../errors.js";
import { describeThrown } from "../thrown.js";
import type { ErrorRecord } from "../client/api-types.js";

export const DEFAULT_PAYLOAD_LIMIT = 1024 * 1024;

/**
 * Deepest nesting of arrays and objects a stored payload may have (`[]` is one level). Bounded so
 * that JSON.stringify (recursive in V8), JSON readers of the stores (SQLite's json functions stop at
 * 1000) and replay never meet a value they cannot handle.
 */
export const MAX_PAYLOAD_DEPTH = 512;

const DEPTH_FIX = `flatten the data, or store it elsewhere and journal a reference to it: a payload may nest arrays and objects at most ${MAX_PAYLOAD_DEPTH} levels deep`;

/**
 * Encodes a value for the journal. Replay must return exactly what the first execution saw, so
 * only values that survive a JSON round trip are accepted (plain objects, arrays, strings, finite
 * numbers, booleans, null; `undefined` is stored as SQL NULL). Anything else fails closed, naming
 * `what` (the step), and so does a payload nested deeper than MAX_PAYLOAD_DEPTH or over `limit`
 * bytes: never truncated.
 */
export function encodePayload(value: unknown, what: string, limit: number, ids: { runId?: string; stepId?: string } = {}): string | null {
  if (value === undefined) return null;
  let problem: Problem | undefined;
  let text: string;
  try {
    problem = findUnserializable(value);
    // Only reached once the depth is bounded: JSON.stringify recurses.
    text = problem ? "" : JSON.stringify(value);
  } catch (e) {
    problem = { kind: "unreadable", text: `reading it threw: ${errorMessage(e)}` };
    text = "";
  }
  if (problem?.kind === "too-deep") {
    throw new SteadError("STEAD_PAYLOAD_TOO_DEEP", `${what} produced a value nested more than ${MAX_PAYLOAD_DEPTH} levels deep, over the payload depth limit`, {
      ...ids,
      limit: MAX_PAYLOAD_DEPTH,
      fix: DEPTH_FIX,
    });
  }
  if (problem) {
    throw new SteadError("STEAD_NOT_SERIALIZABLE", `${what} produced a value that cannot be journaled: ${problem.text}`, {
      ...ids,
      fix: "return plain JSON data (objects, arrays, strings, finite numbers, booleans, null); convert dates to ISO strings",
    });
  }
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

/**
 * Refuses a value (parsed JSON a user typed, e.g. `--input`) nested deeper than a payload may be,
 * so that it is turned away before anything is opened or written.
 */
export function checkPayloadDepth(value: unknown, what: string): void {
  if (depthExceeds(value, MAX_PAYLOAD_DEPTH)) {
    throw new SteadError("STEAD_PAYLOAD_TOO_DEEP", `${what} is nested more than ${MAX_PAYLOAD_DEPTH} levels deep, over the payload depth limit`, {
      limit: MAX_PAYLOAD_DEPTH,
      fix: DEPTH_FIX,
    });
  }
}

export function decodePayload<T = unknown>(text: string | null): T {
  return (text === null ? undefined : JSON.parse(text)) as T;
}

type Problem = { kind: "too-deep" } | { kind: "unserializable" | "unreadable"; text: string };

/** A node of the walk; the path of a node is built from its parents only when it is reported. */
interface Frame {
  value: unknown;
  key: string | number | undefined;
  parent: Frame | undefined;
  /** Arrays and objects enclosing the value. */
  depth: number;
}

const EXIT = Symbol("exit");

function pathOf(f: Frame): string {
  const parts: string[] = [];
  for (let x: Frame | undefined = f; x?.parent; x = x.parent) parts.push(typeof x.key === "number" ? `[${x.key}]` : `.${x.key ?? ""}`);
  return `$${parts.reverse().join("")}`;
}

/**
 * The first thing that keeps `root` from a faithful JSON round trip, or undefined. Iterative: a
 * value nested deeper than the stack allows is reported as too deep, never overflows.
 */
function findUnserializable(root: unknown): Problem | undefined {
  // Ancestors of the current node: a value met again below itself is a cycle; shared siblings are fine.
  const ancestors = new Set<object>();
  const stack: (Frame | { [EXIT]: object })[] = [{ value: root, key: undefined, parent: undefined, depth: 0 }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    if (EXIT in item) {
      ancestors.delete(item[EXIT]);
      continue;
    }
    const f = item;
    const v = f.value;
    const bad = (text: string): Problem => ({ kind: "unserializable", text: `${pathOf(f)} ${text}` });
    switch (typeof v) {
      case "string":
      case "boolean":
        continue;
      case "number":
        if (Number.isFinite(v)) continue;
        return bad(`is ${String(v)}`);
      case "undefined":
        if (f.parent === undefined) continue;
        return bad("is undefined");
      case "bigint":
        return bad("is a bigint");
      case "function":
        return bad("is a function");
      case "symbol":
        return bad("is a symbol");
      case "object": {
        if (v === null) continue;
        if (ancestors.has(v)) return bad("is a circular reference");
        if (f.depth + 1 > MAX_PAYLOAD_DEPTH) return { kind: "too-deep" };
        const children: Frame[] = [];
        if (Array.isArray(v)) {
          for (let i = 0; i < v.length; i++) if (!isPlainScalar(v[i])) children.push({ value: v[i], key: i, parent: f, depth: f.depth + 1 });
        } else {
          const proto: unknown = Object.getPrototypeOf(v);
          if (proto !== Object.prototype && proto !== null) {
            const name = (v as { constructor?: { name?: string } }).constructor?.name ?? "object";
            return bad(`is a ${name}, not a plain object`);
          }
          for (const [k, x] of Object.entries(v)) if (x !== undefined && !isPlainScalar(x)) children.push({ value: x, key: k, parent: f, depth: f.depth + 1 });
        }
        ancestors.add(v);
        stack.push({ [EXIT]: v });
        // Reversed, so that the first problem in document order is the one reported.
        for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as Frame);
        continue;
      }
    }
    return bad("cannot be serialized");
  }
  return undefined;
}

/** A value JSON keeps as it is, with nothing below it to walk (`undefined` in an array becomes null). */
function isPlainScalar(v: unknown): boolean {
  return v === null || v === undefined || typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v));
}

/** Whether `root` nests arrays and objects more than `max` levels deep. Iterative, stops at the first such path. */
function depthExceeds(root: unknown, max: number): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value: root, depth: 0 }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const { value, depth } = item;
    if (typeof value !== "object" || value === null) continue;
    if (depth + 1 > max) return true;
    for (const x of Array.isArray(value) ? value : Object.values(value)) stack.push({ value: x, depth: depth + 1 });
  }
  return false;
}

/** An error as journaled (its shape is the HTTP API's, declared in client/api-types.ts). */
export type { ErrorRecord } from "../client/api-types.js";

const MAX_ERROR_TEXT = 64 * 1024;

/** Never throws, whatever was thrown (see describeThrown). */
export function errorRecord(e: unknown): ErrorRecord {
  const d = describeThrown(e);
  const stepId = isSteadCode(d.code) ? stepIdOf(e) : undefined;
  // A Stead error's own fields are ids and details the journal holds already.
  if (d.fields && isSteadCode(d.code)) {
    const { fields: _fields, ...rest } = d;
    return { ...rest, ...(stepId ? { stepId } : {}) };
  }
  return { ...d, ...(stepId ? { stepId } : {}) };
}

/** The step a Stead error names (a step's failure rethrown by its run); never throws. */
function stepIdOf(e: unknown): string | undefined {
  try {
    const v = (e as { stepId?: unknown } | null)?.stepId;
    return typeof v === "string" ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The journaled text of an error: valid JSON, at most 64 KiB. Never throws. */
export function encodeError(e: unknown): string {
  const rec = errorRecord(e);
  try {
    const text = JSON.stringify(rec);
    if (text.length <= MAX_ERROR_TEXT) return text;
    const { fields: _fields, stack: _stack, ...rest } = rec;
    return JSON.stringify({ ...rest, message: rest.message.slice(0, MAX_ERROR_TEXT / 2) });
  } catch {
    return JSON.stringify({ name: "Error", message: "a thrown value that cannot be described" });
  }
}

export function decodeError(text: string | null): ErrorRecord {
  if (!text) return { name: "Error", message: "unknown error" };
  try {
    return JSON.parse(text) as ErrorRecord;
  } catch {
    return { name: "Error", message: text };
  }
}
