/**
 * A tool's recorded JSON Schema as a form: which kind of field each schema gets, the draft a
 * person edits (the text of each input, not yet a value), and the draft read back as arguments
 * with the errors found on the way, by JSON Pointer (`/opts/dry`, as the server names them).
 *
 * Only what a form shows well is a field: objects with properties, strings, numbers, integers,
 * booleans, enums, arrays of those. Anything else (unions, nullable types, arrays of objects, a
 * schema with no type) is a JSON textarea, read back by JSON.parse, never evaluated. The page's
 * checks (required, types, enum, min/max) stop a bad edit before it is sent; the server checks the
 * whole schema again (a pattern, a format), and its refusal is shown at the field it names.
 */

export type Schema = Record<string, unknown>;

export type FieldKind = "object" | "string" | "number" | "integer" | "boolean" | "enum" | "array" | "json";

/** What a person edits: text per input, a checkbox's state, a list of items, or JSON text. */
export type Draft =
  | { kind: "text"; text: string }
  | { kind: "bool"; value: boolean | undefined }
  | { kind: "enum"; index: number }
  | { kind: "list"; items: Draft[] }
  | { kind: "object"; fields: Record<string, Draft>; extra: Record<string, unknown> }
  | { kind: "json"; text: string };

export type Errors = Record<string, string>;

const obj = (v: unknown): Schema | undefined => (v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Schema) : undefined);

export const properties = (s: Schema): Record<string, Schema> => {
  const out: Record<string, Schema> = {};
  for (const [k, v] of Object.entries(obj(s.properties) ?? {})) out[k] = obj(v) ?? {};
  return out;
};

export const required = (s: Schema): Set<string> => new Set(Array.isArray(s.required) ? s.required.filter((r): r is string => typeof r === "string") : []);

const SIMPLE = new Set<FieldKind>(["string", "number", "integer", "boolean", "enum"]);

export function kindOf(s: Schema): FieldKind {
  if (Array.isArray(s.enum) && s.enum.length > 0 && s.enum.every((v) => v === null || ["string", "number", "boolean"].includes(typeof v))) return "enum";
  if (s.anyOf !== undefined || s.oneOf !== undefined || s.allOf !== undefined || s.not !== undefined || s.$ref !== undefined || s.const !== undefined) return "json";
  switch (s.type) {
    case "object":
      return obj(s.properties) && Object.keys(obj(s.properties)!).length > 0 ? "object" : "json";
    case "string":
    case "number":
    case "integer":
    case "boolean":
      return s.type;
    case "array": {
      const items = obj(s.items);
      return items && SIMPLE.has(kindOf(items)) ? "array" : "json";
    }
    default:
      return "json";
  }
}

const json = (v: unknown): string => (v === undefined ? "" : (JSON.stringify(v, null, 2) ?? ""));

/** The draft of `value` (the call's arguments as the model wrote them) under `s`. */
export function toDraft(s: Schema, value: unknown): Draft {
  const kind = kindOf(s);
  switch (kind) {
    case "object": {
      const v = obj(value);
      if (value !== undefined && !v) return { kind: "json", text: json(value) };
      const props = properties(s);
      const fields: Record<string, Draft> = {};
      for (const [k, p] of Object.entries(props)) fields[k] = toDraft(p, v?.[k]);
      const extra: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v ?? {})) if (!(k in props)) extra[k] = x;
      return { kind: "object", fields, extra };
    }
    case "string":
      return typeof value === "string" || value === undefined ? { kind: "text", text: value ?? "" } : { kind: "json", text: json(value) };
    case "number":
    case "integer":
      return typeof value === "number" || value === undefined ? { kind: "text", text: value === undefined ? "" : String(value) } : { kind: "json", text: json(value) };
    case "boolean":
      return typeof value === "boolean" || value === undefined ? { kind: "bool", value } : { kind: "json", text: json(value) };
    case "enum":
      return { kind: "enum", index: value === undefined ? -1 : (s.enum as unknown[]).findIndex((e) => e === value) };
    case "array": {
      if (value !== undefined && !Array.isArray(value)) return { kind: "json", text: json(value) };
      const items = obj(s.items) ?? {};
      return { kind: "list", items: ((value as unknown[] | undefined) ?? []).map((x) => toDraft(items, x)) };
    }
    case "json":
      return { kind: "json", text: json(value) };
  }
}

/** A draft of one more array item (empty). */
export const emptyItem = (s: Schema): Draft => toDraft(obj(s.items) ?? {}, undefined);

const MISSING = Symbol("missing");
/** A value read from a draft, or MISSING (the field is absent). */
type Read = unknown;

/**
 * The arguments the draft says, and every error found, by pointer; `ok` is false when any. A
 * field left empty is absent: an error where the schema requires it.
 */
export function fromDraft(s: Schema, d: Draft): { value: unknown; errors: Errors; ok: boolean } {
  const errors: Errors = {};
  const v = read(s, d, "", errors, true);
  return { value: v === MISSING ? undefined : v, errors, ok: Object.keys(errors).length === 0 };
}

function read(s: Schema, d: Draft, at: string, errors: Errors, needed: boolean): Read {
  const fail = (message: string): Read => {
    errors[at] ??= message;
    return MISSING;
  };
  switch (d.kind) {
    case "object": {
      const out: Record<string, unknown> = { ...d.extra };
      const props = properties(s);
      const req = required(s);
      for (const [k, p] of Object.entries(props)) {
        const field = d.fields[k];
        const v = field ? read(p, field, `${at}/${escape(k)}`, errors, req.has(k)) : MISSING;
        if (v !== MISSING) out[k] = v;
      }
      // An optional object nobody filled in is left out, not sent empty.
      if (!needed && Object.keys(out).length === 0) return MISSING;
      return out;
    }
    case "text": {
      const type = kindOf(s);
      if (type === "string") {
        // An optional string left empty is absent; a required one may be "".
        if (d.text === "" && !needed) return MISSING;
        return checkString(s, d.text, fail);
      }
      if (d.text.trim() === "") return needed ? fail("is required") : MISSING;
      const n = Number(d.text.trim());
      if (!Number.isFinite(n)) return fail(`must be a number (not "${d.text}")`);
      if (type === "integer" && !Number.isInteger(n)) return fail("must be a whole number");
      return checkNumber(s, n, fail);
    }
    case "bool":
      // An unticked box is false where the schema requires the field.
      return d.value ?? (needed ? false : MISSING);
    case "enum": {
      const options = (s.enum as unknown[] | undefined) ?? [];
      if (d.index < 0 || d.index >= options.length) return needed ? fail(`is required: choose one of ${options.map((o) => JSON.stringify(o)).join(", ")}`) : MISSING;
      return options[d.index];
    }
    case "list": {
      const items = obj(s.items) ?? {};
      const out: unknown[] = [];
      d.items.forEach((item, i) => {
        const v = read(items, item, `${at}/${i}`, errors, true);
        if (v !== MISSING) out.push(v);
      });
      if (typeof s.minItems === "number" && d.items.length < s.minItems) return fail(`needs at least ${s.minItems} item${s.minItems === 1 ? "" : "s"}`);
      if (typeof s.maxItems === "number" && d.items.length > s.maxItems) return fail(`takes at most ${s.maxItems} item${s.maxItems === 1 ? "" : "s"}`);
      return out;
    }
    case "json": {
      if (d.text.trim() === "") return needed ? fail("is required") : MISSING;
      try {
        return JSON.parse(d.text) as unknown;
      } catch (e) {
        return fail(`is not JSON: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }
}

function checkString(s: Schema, v: string, fail: (m: string) => Read): Read {
  if (typeof s.minLength === "number" && v.length < s.minLength) return fail(`must be at least ${s.minLength} characters`);
  if (typeof s.maxLength === "number" && v.length > s.maxLength) return fail(`must be at most ${s.maxLength} characters`);
  return v;
}

function checkNumber(s: Schema, n: number, fail: (m: string) => Read): Read {
  if (typeof s.minimum === "number" && n < s.minimum) return fail(`must be ${s.minimum} or more`);
  if (typeof s.maximum === "number" && n > s.maximum) return fail(`must be ${s.maximum} or less`);
  if (typeof s.exclusiveMinimum === "number" && n <= s.exclusiveMinimum) return fail(`must be more than ${s.exclusiveMinimum}`);
  if (typeof s.exclusiveMaximum === "number" && n >= s.exclusiveMaximum) return fail(`must be less than ${s.exclusiveMaximum}`);
  return n;
}

/** A property name as a JSON Pointer segment. */
export const escape = (k: string): string => k.replace(/~/g, "~0").replace(/\//g, "~1");

/**
 * The fields a refusal of edited arguments names (STEAD_SCHEMA_MISMATCH: "…do not match its input
 * schema: /count must be integer; (root) must have required property 'name'; the call still
 * waits…"), by pointer; what names no field is left to the refusal's own box.
 */
export function serverErrors(message: string): Errors {
  const out: Errors = {};
  const at = message.indexOf("input schema: ");
  if (at < 0) return out;
  const list = message.slice(at + "input schema: ".length).replace(/; the call still waits for a decision\.?$/, "");
  for (const part of list.split("; ")) {
    const m = /^(\/\S*|\(root\)) (.+)$/.exec(part);
    if (!m) continue;
    let pointer = m[1] === "(root)" ? "" : m[1]!;
    let text = m[2]!;
    const missing = /^must have required property '(.+)'$/.exec(text);
    if (missing) {
      pointer = `${pointer}/${escape(missing[1]!)}`;
      text = "is required";
    }
    out[pointer] ??= text;
  }
  return out;
}
