import type { FlexibleSchema, Schema } from "@ai-sdk/provider-utils";
import { schemaLib } from "./schema-lib.js";
import type { JSONSchema7 } from "@ai-sdk/provider";
import { SteadError } from "../errors.js";
import type { ReconcileResult, Recovery } from "../engine/context-types.js";

/** What a tool's `run` (and `reconcile`) receives besides its input. */
export interface ToolContext {
  runId: string;
  toolName: string;
  toolCallId: string;
  /** Stable across attempts of this call: `<run id>:tool:<tool-call id>`. Give it to the outside world to de-duplicate on. */
  idempotencyKey: string;
  attempt: number;
  /** Whether this process is the run's first, or a replacement (and why). */
  recovery: Recovery;
  /** Aborted when the run's execution ends in this process (lease lost, shutdown). */
  signal: AbortSignal;
  /** The run's workspace directory (absolute), or null: already brought to the last completed step. */
  workspace: string | null;
}

export interface ToolCallInfo<I> {
  toolName: string;
  toolCallId: string;
  input: I;
}

export interface ToolOptions<I, O> {
  description?: string;
  /** The input schema (zod, or any AI SDK schema). The model sees it; every call and every edited approval is validated against it. */
  input: FlexibleSchema<I>;
  /** Safe to run again after a crash cut it off (reads, or writes that de-duplicate). Default false: an intent is committed first. */
  idempotent?: boolean;
  /** Asks the outside world whether an interrupted call happened ("done" with its result, "not-done", or "unknown" → hold). */
  reconcile?: (call: ToolCallInfo<I>, ctx: ToolContext) => Promise<ReconcileResult<O>> | ReconcileResult<O>;
  /** A person decides before the call runs (the run parks, costing no process). */
  needsApproval?: boolean | ((input: I, ctx: { runId: string; toolCallId: string }) => boolean);
  /** An error that should fail the run instead of going back to the model as a tool error. */
  fatal?: boolean | ((error: unknown) => boolean);
  run: (input: I, ctx: ToolContext) => Promise<O> | O;
}

export interface ToolDefinition<I = unknown, O = unknown> extends ToolOptions<I, O> {
  readonly schema: Schema<I>;
  /** The input schema as JSON Schema (what the model and approval edits are checked against). */
  readonly jsonSchema: JSONSchema7;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = ToolDefinition<any, any>;

export function tool<I, O>(options: ToolOptions<I, O>): ToolDefinition<I, O> {
  if (typeof options !== "object" || options === null || typeof options.run !== "function") {
    throw new SteadError("STEAD_INVALID_DEFINITION", "tool() needs { input, run }", { fix: "tool({ input: z.object({ ... }), run: async (input, ctx) => ... })" });
  }
  if (options.input === undefined || options.input === null) {
    throw new SteadError("STEAD_INVALID_DEFINITION", "tool() needs an input schema", { fix: "pass input: z.object({}) for a tool without arguments" });
  }
  const schema = schemaLib().asSchema(options.input);
  const js = schema.jsonSchema;
  if (typeof (js as { then?: unknown }).then === "function") {
    throw new SteadError("STEAD_INVALID_DEFINITION", "the tool's input schema only gives its JSON Schema asynchronously", {
      fix: "use a zod schema or jsonSchema({...}) with a plain object",
    });
  }
  return { ...options, schema, jsonSchema: js as JSONSchema7 };
}
