import { fileURLToPath } from "node:url";
import { SteadError } from "../../errors.js";
import { DEFINITION, type AnyDefinition, type WorkflowContext, type WorkflowDefinition } from "../context-types.js";
import { moduleGraphFingerprint, textFingerprint } from "./fingerprint.js";
import { declareInput, type InputOf, type InputSchema, type OutputOf } from "./input-schema.js";

export { DEFINITION, type WorkflowDefinition, type AnyDefinition } from "../context-types.js";

export interface WorkflowOptions {
  /**
   * Pins the fingerprint to this string instead of hashing the module graph. Use it when code is
   * bundled or generated and you decide yourself which changes break running runs (a change of
   * the input schema among them).
   */
  version?: string;
  /**
   * The input's schema (zod 4, or any Standard Schema with Standard JSON Schema). Every start with
   * the definition is checked against it (a mismatch is STEAD_SCHEMA_MISMATCH, and nothing is
   * written); the function receives the input as the schema parses it (defaults applied); workers
   * announce its JSON Schema, against which `stead start <name>` checks an input without the code.
   */
  input?: InputSchema;
}

export const DEFINITION_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

export function workflow<I = unknown, O = unknown>(name: string, fn: (ctx: WorkflowContext, input: I) => Promise<O> | O): WorkflowDefinition<I, O>;
export function workflow<S extends InputSchema, O = unknown>(
  name: string,
  options: WorkflowOptions & { input: S },
  fn: (ctx: WorkflowContext, input: OutputOf<S>) => Promise<O> | O,
): WorkflowDefinition<InputOf<S>, O>;
export function workflow<I = unknown, O = unknown>(
  name: string,
  options: WorkflowOptions,
  fn: (ctx: WorkflowContext, input: I) => Promise<O> | O,
): WorkflowDefinition<I, O>;
export function workflow<I, O>(
  name: string,
  a: WorkflowOptions | ((ctx: WorkflowContext, input: I) => Promise<O> | O),
  b?: (ctx: WorkflowContext, input: I) => Promise<O> | O,
): WorkflowDefinition<I, O> {
  const fn = typeof a === "function" ? a : b;
  const options = typeof a === "function" ? {} : a;
  if (typeof name !== "string" || !DEFINITION_NAME.test(name)) {
    throw new SteadError("STEAD_INVALID_DEFINITION", `invalid workflow name ${JSON.stringify(name)}`, {
      fix: "use 1-128 characters: letters, digits, '_', '.', ':' or '-', starting with a letter or digit",
    });
  }
  if (typeof fn !== "function") {
    throw new SteadError("STEAD_INVALID_DEFINITION", `workflow ${name} has no function`, {
      fix: 'pass it as the last argument: workflow("name", async (ctx, input) => { ... })',
    });
  }
  const input = options.input === undefined ? undefined : declareInput(`workflow ${name}`, options.input);
  const module = callerModule();
  let fp: string | undefined;
  return {
    [DEFINITION]: true,
    kind: "workflow",
    name,
    module,
    fn,
    ...(input ? { input } : {}),
    // The input schema is part of the code the fingerprint covers: in the module graph (where the
    // schema is written), or pinned by `version`; only hashing the function's text would miss it,
    // so its JSON Schema is hashed with it. A workflow without one keeps the fingerprint it had.
    fingerprint() {
      fp ??= options.version !== undefined
        ? `v:${options.version}`
        : module
          ? moduleGraphFingerprint(module)
          : textFingerprint(input ? `${fn.toString()}\0${JSON.stringify(input.jsonSchema)}` : fn.toString());
      return fp;
    },
  };
}

export function isDefinition(value: unknown): value is AnyDefinition {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[DEFINITION] === true;
}

/**
 * Refuses two different definition objects with one name. Every worker refuses such a set, so a
 * run started before this check could never be taken: callers check before they write anything.
 */
export function assertDistinctNames(definitions: readonly unknown[]): void {
  const byName = new Map<string, AnyDefinition>();
  for (const d of definitions) {
    if (!isDefinition(d)) continue;
    const seen = byName.get(d.name);
    if (seen && seen !== d) {
      throw new SteadError("STEAD_INVALID_DEFINITION", `two of the given definitions are named "${d.name}"`, {
        fix: "give each workflow a unique name, and pass each definition once",
      });
    }
    byName.set(d.name, d);
  }
}

/** The file of the first stack frame outside this package's engine (the module calling `workflow()`). */
export function callerModule(cut: (...args: never[]) => unknown = workflow): string | null {
  // Cut the stack at workflow(): under source maps (tsx, --enable-source-maps) this module's own
  // frames show as src/engine/definitions/definition.ts, not as this file, so comparing paths alone misses them.
  const holder: { stack?: string } = {};
  Error.captureStackTrace(holder, cut);
  const stack = holder.stack?.split("\n").slice(1) ?? [];
  const self = __filename;
  for (const line of stack) {
    const m = /\(?((?:file:\/\/)?\/[^():]+):\d+:\d+\)?\s*$/.exec(line.trim());
    const loc = m?.[1];
    if (!loc) continue;
    const path = loc.startsWith("file://") ? fileURLToPath(loc) : loc;
    if (path === self || path.replace(/\.[jt]s$/, "") === self.replace(/\.[jt]s$/, "")) continue;
    if (path.includes("/node_modules/")) continue;
    return path;
  }
  return null;
}
