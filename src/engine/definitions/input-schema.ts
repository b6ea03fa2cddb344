/**
 * A definition's declared input: the schema `workflow(name, { input }, fn)` takes, checked at
 * every start with the definition and again as the function receives the input, and its JSON
 * Schema, which workers announce so that a start by name is checked without the code.
 */
import { SteadError, errorMessage } from "../../errors.js";
import type { AnyDefinition, DeclaredInput, InputIssue } from "../context-types.js";
import { pointerSegment } from "./json-schema.js";

type StandardPath = ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>;
type StandardResult<Out> = { readonly value: Out; readonly issues?: undefined } | { readonly issues: ReadonlyArray<{ readonly message: string; readonly path?: StandardPath | undefined }> };

/**
 * What `workflow(name, { input }, fn)` takes: a zod 4 schema, or any Standard Schema
 * (standardschema.dev) that also implements Standard JSON Schema.
 */
export interface InputSchema<In = unknown, Out = In> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardResult<Out> | Promise<StandardResult<Out>>;
    readonly jsonSchema: { readonly input: (options: { readonly target: string }) => Record<string, unknown> };
    readonly types?: { readonly input: In; readonly output: Out } | undefined;
  };
}

/** What a start passes: the schema's input type. */
export type InputOf<S extends InputSchema> = NonNullable<S["~standard"]["types"]>["input"];
/** What the function receives: the schema's output type (defaults and transforms applied). */
export type OutputOf<S extends InputSchema> = NonNullable<S["~standard"]["types"]>["output"];

/** Issues kept in an error's details; its message names the first few. */
const MAX_ISSUES = 20;
const MESSAGE_ISSUES = 5;
const MAX_ISSUE_TEXT = 200;

const clip = (s: string): string => (s.length <= MAX_ISSUE_TEXT ? s : `${s.slice(0, MAX_ISSUE_TEXT - 1)}…`);

function pointer(path: StandardPath | undefined): string {
  return (path ?? []).map((p) => `/${pointerSegment(String(typeof p === "object" ? p.key : p))}`).join("");
}

/**
 * The declared input of a definition named `what` ("workflow fixer"). Refused at once
 * (STEAD_INVALID_DEFINITION) when the schema cannot check a value or has no JSON Schema: the
 * input is stored as JSON, and a start by name is checked against the announced JSON Schema.
 */
export function declareInput(what: string, schema: unknown): DeclaredInput {
  const std = (schema as Partial<InputSchema> | null | undefined)?.["~standard"];
  if (typeof std?.validate !== "function" || typeof std.jsonSchema?.input !== "function") {
    throw new SteadError("STEAD_INVALID_DEFINITION", `${what}: its input is not a schema Stead can check and announce`, {
      fix: "pass a zod 4 schema, e.g. { input: z.object({ issue: z.string() }) } (any Standard Schema that also implements Standard JSON Schema works)",
    });
  }
  let jsonSchema: Record<string, unknown>;
  try {
    // A copy through JSON: what is announced is exactly what the store will hold.
    jsonSchema = JSON.parse(JSON.stringify(std.jsonSchema.input({ target: "draft-2020-12" }))) as Record<string, unknown>;
  } catch (e) {
    throw new SteadError("STEAD_INVALID_DEFINITION", `${what}: its input schema has no JSON Schema (${errorMessage(e)})`, {
      fix: "use JSON types in the input schema (a date as z.iso.datetime(), not z.date()): the input is stored as JSON and announced as JSON Schema",
    });
  }
  const validate = std.validate;
  return {
    jsonSchema: Object.freeze(jsonSchema),
    async check(value) {
      let r: StandardResult<unknown>;
      try {
        r = await validate(value);
      } catch (e) {
        throw new SteadError("STEAD_INVALID_DEFINITION", `${what}: its input schema threw while checking an input (${errorMessage(e)})`, {
          fix: "make the schema's refinements return false instead of throwing",
        });
      }
      if (r.issues === undefined) return { ok: true, value: r.value };
      return { ok: false, issues: r.issues.slice(0, MAX_ISSUES).map((i) => ({ path: pointer(i.path), message: clip(String(i.message)) })) };
    },
  };
}

/** The mismatch of an input with a definition's schema: each issue's place and message, never the input itself. */
export function inputMismatch(name: string, issues: readonly InputIssue[], details: { fix: string; runId?: string; fingerprint?: string }): SteadError {
  const listed = issues.slice(0, MESSAGE_ISSUES).map((i) => `${i.path || "(root)"}: ${i.message}`);
  const more = issues.length > MESSAGE_ISSUES ? `; and ${issues.length - MESSAGE_ISSUES} more` : "";
  return new SteadError("STEAD_SCHEMA_MISMATCH", `the input of "${name}" does not match its input schema: ${listed.join("; ") || "invalid"}${more}`, {
    ...details,
    definition: name,
    issues: issues.map((i) => ({ ...i })),
  });
}

/**
 * The input as `def`'s function receives it, checked against its declared input (as given when
 * it declares none). A mismatch is STEAD_SCHEMA_MISMATCH.
 */
export async function checkedInput(def: AnyDefinition, value: unknown, details: { fix: string; runId?: string }): Promise<unknown> {
  if (!def.input) return value;
  const r = await def.input.check(value);
  if (r.ok) return r.value;
  throw inputMismatch(def.name, r.issues, details);
}
