/**
 * A start by a definition's name, as the HTTP API (POST /runs) and the MCP `start` tool take it:
 * no code is loaded, the input is checked against the JSON Schema the definition's workers
 * announced (stead.runs.startByName), and the reply says whether a live worker serves it now.
 * Starting one no live worker serves is allowed: the run waits, pending, until one does.
 */
import { z } from "zod";
import { SteadError } from "../errors.js";
import { DEFINITION_NAME } from "../engine/definitions/definition.js";
import type { StartByNameResult, StartReply } from "../client/api-types.js";
import type { Replayable } from "../engine/control/idempotency.js";
import type { Stead } from "../stead/stead.js";

export const startRequest = z
  .object({
    definition: z.string().regex(DEFINITION_NAME, "a definition's name as GET /definitions lists it (1-128 letters, digits, '_', '.', ':' or '-')").describe("the definition's name, as a worker announced it"),
    input: z.unknown().optional().describe("the run's input (any JSON; default null), checked against the definition's announced input schema"),
    id: z.string().min(1).max(200).optional().describe("the run's id (default a fresh one)"),
  })
  .strict();

export type StartRequest = z.output<typeof startRequest>;

export type { StartReply } from "../client/api-types.js";

/**
 * Starts the run; a mismatch with the announced schema is refused naming the input's field, at
 * `inputField` and the first issue's place (a JSON Pointer as dotted segments).
 */
export async function startByRequest(stead: Stead, r: StartRequest, o: { by: string | null; idempotencyKey: string | undefined; inputField: string }): Promise<StartReply> {
  let started: Replayable<StartByNameResult>;
  try {
    started = await stead.runs.startByName(r.definition, r.input ?? null, { by: o.by, ...(r.id === undefined ? {} : { id: r.id }), ...(o.idempotencyKey === undefined ? {} : { idempotencyKey: o.idempotencyKey }) });
  } catch (e) {
    throw withInputField(e, o.inputField);
  }
  const reply: StartReply = { ...started, definition: r.definition };
  if (!started.served) reply.note = `no live worker serves "${r.definition}" now: the run is pending and starts when a worker that serves it does (\`stead worker <file>\`)`;
  return reply;
}

function withInputField(e: unknown, inputField: string): unknown {
  if (!(e instanceof SteadError) || e.code !== "STEAD_SCHEMA_MISMATCH") return e;
  const issues = e.details.issues;
  const first = Array.isArray(issues) ? (issues[0] as { path?: unknown } | undefined) : undefined;
  const pointer = typeof first?.path === "string" ? first.path : "";
  const segments = pointer === "" ? [] : pointer.slice(1).split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
  return new SteadError(e.code, e.message, { ...e.details, field: [inputField, ...segments].join(".") });
}
