/**
 * A refused tool call as an MCP tool error: `isError: true`, the SteadError's code, message and
 * fix as one line of text and as structured content `{ error }`. Only a SteadError's own message
 * and the fields problem.ts shows are given; anything else is STEAD_INTERNAL, saying nothing of the
 * error (a stack or a driver message may hold secrets), which the server logs instead.
 *
 * Hazard: a client holds structured content to the tool's output schema even on an error (the
 * TypeScript SDK's client does), so every output schema admits `{ error }` (see envelope).
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { problemOf } from "../problem.js";

export const refusal = z.looseObject({
  code: z.string().describe("a Stead error code (docs/errors.md)"),
  message: z.string(),
  fix: z.string().optional().describe("what to do"),
  status: z.number().int().describe("the HTTP status the same refusal has in the HTTP API"),
  runId: z.string().optional(),
  stepId: z.string().optional(),
  field: z.string().optional().describe("the argument that is wrong"),
});
export type Refusal = z.infer<typeof refusal>;

/** The refusal for `e`; `internal`: not a SteadError, to be logged by the caller. */
export function refusalOf(e: unknown): { refusal: Refusal; internal: boolean } {
  const { problem, internal } = problemOf(e);
  const { type: _type, title: _title, detail, ...rest } = problem;
  return { refusal: { ...rest, message: detail }, internal };
}

export const refusalText = (r: Refusal): string => `${r.code}: ${r.message}${r.fix ? ` (fix: ${r.fix})` : ""}`;

export function toolError(r: Refusal): CallToolResult {
  return { isError: true, content: [{ type: "text", text: refusalText(r) }], structuredContent: { error: r } };
}

/**
 * A tool's output schema as listed: the result's fields, or `{ error }` alone. In the JSON Schema
 * every field is declared once at the top (readable by a client), and `anyOf` says which must be
 * present: the result's required fields, or `error`. Zod's own check of it is loose; the server
 * checks each result against the result schema itself before sending it.
 */
export function envelope(result: z.ZodObject): z.ZodObject {
  const json = z.toJSONSchema(result, { io: "output", unrepresentable: "any" }) as { required?: string[] };
  const fields = Object.fromEntries(Object.entries(result.shape).map(([k, v]) => [k, (v as z.ZodType).optional()]));
  return z.looseObject({ ...fields, error: refusal.optional().describe("present alone when the call was refused (isError: true)") }).meta({ anyOf: [{ required: json.required ?? [] }, { required: ["error"] }] });
}
