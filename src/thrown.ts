/**
 * Descriptions of thrown values that never throw. What user code throws may be anything: its
 * getters, toString, toJSON or Proxy traps may throw (and throw values that throw in turn), it may
 * be cyclic or huge. Every read of it here is guarded, and what is kept is bounded in size.
 * Whatever it says, an access token in it is redacted (redact.ts): descriptions reach the journal,
 * the terminal and the server's responses.
 */
import { redactTokens } from "./redaction/redact.js";

export interface ThrownDescription {
  /** An Error's `name`; "Error" for anything else, or when the name cannot be read. */
  name: string;
  message: string;
  code?: string;
  fix?: string;
  stack?: string;
  /** The value's own enumerable fields that could be read, copied as JSON data, bounded; secret-looking keys redacted. */
  fields?: Record<string, unknown>;
}

const MAX_MESSAGE = 16 * 1024;
const MAX_STRING = 1000;
const MAX_KEYS = 50;
const MAX_DEPTH = 4;
/** Characters of JSON the fields may take, roughly: past it, the rest are left out. */
const FIELDS_BUDGET = 8 * 1024;
const STACK_LINES = 8;
const SECRET_KEY = /secret|token|password|passwd|api[-_]?key|credential|private|authorization|cookie/i;
/** Read from an Error's own slots, not repeated in its fields. */
const ERROR_KEYS = new Set(["name", "message", "stack", "code", "fix", "cause"]);

type Read = { ok: true; value: unknown } | { ok: false; error: unknown };

function read(f: () => unknown): Read {
  try {
    return { ok: true, value: f() };
  } catch (error) {
    return { ok: false, error };
  }
}

/**
 * What marks text cut short here. Hazard: a cut may fall inside a secret, whose first part no
 * rule matches any more; the redactor hides a candidate that ends at a mark whole (redactor.ts).
 */
export const CUT_MARK = /… \(\d+ more (?:characters|lines)\)/g;

function clip(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max)}… (${s.length - max} more characters)` : s;
}

/** A stack's first lines, each clipped; the lines left out are counted in a cut mark. */
function clipStack(stack: string): string {
  const lines = stack.split("\n");
  const kept = lines.slice(0, STACK_LINES).map((l) => clip(l, 300));
  if (lines.length > STACK_LINES) kept.push(`… (${lines.length - STACK_LINES} more lines)`);
  return kept.join("\n");
}

/** A short, single description of a value, for what an access threw. Never recurses into describe. */
function brief(x: unknown): string {
  try {
    switch (typeof x) {
      case "string":
        return clip(x, 200);
      case "symbol":
        return Symbol.prototype.toString.call(x);
      case "bigint":
        return `${BigInt.prototype.toString.call(x)}n`;
      case "function":
        return "a function";
      case "object":
        if (x === null) return "null";
        if (x instanceof Error) {
          const name: unknown = x.name;
          const message: unknown = x.message;
          if (typeof message !== "string") return "an Error";
          return clip(typeof name === "string" ? `${name}: ${message}` : message, 200);
        }
        return "an object";
      default:
        return String(x);
    }
  } catch {
    return "a value that cannot be described";
  }
}

function readString(o: object, key: string): string | undefined {
  const r = read(() => (o as Record<string, unknown>)[key]);
  return r.ok && typeof r.value === "string" ? r.value : undefined;
}

/** Describes any thrown value, with every access token in its text redacted. Never throws. */
export function describeThrown(e: unknown): ThrownDescription {
  try {
    return redactedCopy(describe(e)) as ThrownDescription;
  } catch (inner) {
    return { name: "Error", message: redactTokens(`a thrown value that cannot be described (describing it threw ${brief(inner)})`) };
  }
}

/** A description's strings, keys included, with tokens redacted. It is plain bounded data already. */
function redactedCopy(v: unknown): unknown {
  if (typeof v === "string") return redactTokens(v);
  if (Array.isArray(v)) return v.map(redactedCopy);
  if (typeof v === "object" && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [redactTokens(k), redactedCopy(x)]));
  return v;
}

function describe(e: unknown): ThrownDescription {
  if (typeof e !== "object" || e === null) {
    const message = typeof e === "string" ? clip(e, MAX_MESSAGE) : typeof e === "function" ? `a thrown function ${readString(e, "name") ?? ""}`.trim() : brief(e);
    return { name: "Error", message };
  }
  const isError = read(() => e instanceof Error);
  if (isError.ok && isError.value === true) return describeError(e as Error);
  const fields = ownFields(e, new Set());
  if (!fields.ok) return { name: "Error", message: `an object that could not be read (reading it threw ${brief(fields.error)})` };
  const message = clip(JSON.stringify(fields.value), MAX_MESSAGE);
  return { name: "Error", message, ...(Object.keys(fields.value).length ? { fields: fields.value } : {}) };
}

function describeError(e: Error): ThrownDescription {
  const name = readString(e, "name");
  const m = read(() => e.message);
  const message = !m.ok
    ? `(the message of this ${name ?? "error"} could not be read (reading it threw ${brief(m.error)}))`
    : typeof m.value === "string"
      ? clip(m.value, MAX_MESSAGE)
      : brief(m.value);
  const code = readString(e, "code");
  const fix = readString(e, "fix");
  const stack = readString(e, "stack");
  const own = ownFields(e, ERROR_KEYS);
  const fields: Record<string, unknown> = own.ok ? own.value : {};
  const cause = read(() => (Object.prototype.hasOwnProperty.call(e, "cause") ? (e as { cause?: unknown }).cause : undefined));
  if (cause.ok && cause.value !== undefined) fields.cause = brief(cause.value);
  return {
    name: name ?? "Error",
    message,
    ...(code !== undefined ? { code } : {}),
    ...(fix !== undefined ? { fix: clip(fix, MAX_STRING) } : {}),
    ...(stack ? { stack: clipStack(stack) } : {}),
    ...(Object.keys(fields).length ? { fields } : {}),
  };
}

const SKIP = Symbol("skip");

/** The own enumerable fields of `o` (minus `skip`), copied as bounded JSON data. Fails when even its keys cannot be listed. */
function ownFields(o: object, skip: ReadonlySet<string>): { ok: true; value: Record<string, unknown> } | { ok: false; error: unknown } {
  const budget = { left: FIELDS_BUDGET };
  const keys = read(() => Object.keys(o));
  if (!keys.ok) return { ok: false, error: keys.error };
  const seen = new Set<object>([o]);
  const out = copyEntries(o, (keys.value as string[]).filter((k) => !skip.has(k)), 1, seen, budget);
  return { ok: true, value: out };
}

function copyEntries(o: object, keys: string[], depth: number, seen: Set<object>, budget: { left: number }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let kept = 0;
  for (const k of keys) {
    if (kept >= MAX_KEYS || budget.left <= 0) {
      out["…"] = `${keys.length - kept} more fields left out`;
      break;
    }
    const v = SECRET_KEY.test(k) ? "[redacted]" : fieldValue(o, k, depth, seen, budget);
    if (v === SKIP) continue;
    budget.left -= k.length + 4;
    out[k] = v;
    kept++;
  }
  return out;
}

/** One field: a data property as it is; an accessor through its getter, guarded. */
function fieldValue(o: object, k: string, depth: number, seen: Set<object>, budget: { left: number }): unknown {
  const r = read(() => {
    const d = Object.getOwnPropertyDescriptor(o, k);
    return d === undefined ? undefined : "value" in d ? d.value : d.get ? (d.get.call(o) as unknown) : undefined;
  });
  if (!r.ok) return `[unreadable: ${brief(r.error)}]`;
  return copy(r.value, depth, seen, budget);
}

function copy(v: unknown, depth: number, seen: Set<object>, budget: { left: number }): unknown {
  switch (typeof v) {
    case "string": {
      const s = clip(v, Math.max(0, Math.min(MAX_STRING, budget.left)));
      budget.left -= s.length + 2;
      return s;
    }
    case "number":
      budget.left -= 8;
      return Number.isFinite(v) ? v : String(v);
    case "boolean":
      budget.left -= 5;
      return v;
    case "undefined":
    case "function":
      return SKIP;
    case "bigint":
    case "symbol":
      budget.left -= 20;
      return brief(v);
  }
  if (v === null) return null;
  const o = v as object;
  if (seen.has(o)) return "[circular]";
  if (depth >= MAX_DEPTH || budget.left <= 0) return "[…]";
  const isError = read(() => o instanceof Error);
  if (!isError.ok) return `[unreadable: ${brief(isError.error)}]`;
  if (isError.value === true) return brief(o);
  const isDate = read(() => o instanceof Date);
  if (isDate.ok && isDate.value === true) {
    const iso = read(() => (o as Date).toISOString());
    return iso.ok ? iso.value : "[invalid date]";
  }
  seen.add(o);
  try {
    const isArray = read(() => Array.isArray(o));
    if (isArray.ok && isArray.value === true) {
      const len = read(() => (o as unknown[]).length);
      const n = len.ok && typeof len.value === "number" ? len.value : 0;
      const out: unknown[] = [];
      for (let i = 0; i < n; i++) {
        if (i >= MAX_KEYS || budget.left <= 0) {
          out.push(`${n - i} more items left out`);
          break;
        }
        const item = fieldValue(o, String(i), depth + 1, seen, budget);
        out.push(item === SKIP ? null : item);
        budget.left -= 1;
      }
      return out;
    }
    const keys = read(() => Object.keys(o));
    if (!keys.ok) return `[unreadable: ${brief(keys.error)}]`;
    return copyEntries(o, keys.value as string[], depth + 1, seen, budget);
  } finally {
    seen.delete(o);
  }
}
