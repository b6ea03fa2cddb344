/**
 * JSON Schema checks (ajv, loaded on first use): edited tool arguments against a tool's recorded
 * schema, and a start by name against a definition's announced one. The engine and the agent
 * layer check through here, so the CLI and the server need no user code to validate.
 *
 * Hazard: the schemas come from the store (written by workers running the project's code, so they
 * are as trusted as that code, no more): ajv compiles each to a function. They are compiled with
 * `strict: false` and `addUsedSchema: false` (a schema's `$id` never registers into the shared
 * instances), and kept in a bounded cache by text (ajv's own cache is keyed by object and would
 * grow with every schema read back from the store). A `pattern` in a schema is a regular
 * expression run on the input: one written to backtrack badly can make a check slow.
 */
import { createRequire } from "node:module";
import type { ErrorObject, ValidateFunction } from "ajv";
import type { InputIssue } from "../context-types.js";

interface AjvLike {
  compile(schema: object): ValidateFunction;
  removeSchema(schema: object): unknown;
}

let ajvs: { draft7: AjvLike; draft2020: AjvLike } | undefined;
const compiled = new Map<string, ValidateFunction>();
const CACHE_SIZE = 200;

/** A validator of `schema`: draft 2020-12 when it says so in `$schema`, else draft 7. */
export function compileJsonSchema(schema: object): ValidateFunction {
  const text = JSON.stringify(schema);
  const hit = compiled.get(text);
  if (hit) return hit;
  if (!ajvs) {
    // `.default` is ajv's class under every loader (plain require, tsx, vitest).
    const require = createRequire(__filename);
    const Ajv = require("ajv") as { default: new (o: object) => AjvLike };
    const Ajv2020 = require("ajv/dist/2020") as { default: new (o: object) => AjvLike };
    const options = { allErrors: true, strict: false, addUsedSchema: false };
    ajvs = { draft7: new Ajv.default(options), draft2020: new Ajv2020.default(options) };
  }
  const declared = (schema as { $schema?: unknown }).$schema;
  const ajv = typeof declared === "string" && declared.includes("2020-12") ? ajvs.draft2020 : ajvs.draft7;
  const validate = ajv.compile(schema);
  ajv.removeSchema(schema);
  if (compiled.size >= CACHE_SIZE) compiled.delete(compiled.keys().next().value as string);
  compiled.set(text, validate);
  return validate;
}

/**
 * Where `value` breaks `schema`, each issue at a JSON Pointer ("" for the value itself); empty
 * when it conforms. A missing required property is placed at the property, as a definition's own
 * schema places it: its place names what to add.
 */
export function jsonSchemaIssues(schema: object, value: unknown): InputIssue[] {
  const validate = compileJsonSchema(schema);
  return validate(value) ? [] : (validate.errors ?? []).map(issueOf);
}

function issueOf(e: ErrorObject): InputIssue {
  const params = e.params as { missingProperty?: unknown; additionalProperty?: unknown };
  if (e.keyword === "required" && typeof params.missingProperty === "string") {
    return { path: `${e.instancePath}/${pointerSegment(params.missingProperty)}`, message: "is required" };
  }
  if (e.keyword === "additionalProperties" && typeof params.additionalProperty === "string") {
    return { path: `${e.instancePath}/${pointerSegment(params.additionalProperty)}`, message: "is not a property the schema allows" };
  }
  return { path: e.instancePath, message: e.message ?? "is invalid" };
}

/** One segment of a JSON Pointer (RFC 6901): `~` and `/` escaped. */
export const pointerSegment = (key: string): string => key.replace(/~/g, "~0").replace(/\//g, "~1");
