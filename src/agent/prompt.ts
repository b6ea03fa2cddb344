import { SteadError } from "../errors.js";
import type { DeclaredInput } from "../engine/context-types.js";
import type { AgentDefinition, AgentInput } from "./definition-types.js";

const isPrompt = (input: unknown): input is AgentInput =>
  typeof input === "string" || (typeof input === "object" && input !== null && typeof (input as { prompt?: unknown }).prompt === "string");

/**
 * The input every agent takes: a prompt, as a string or `{ prompt }`. Its shape is the loop's, so
 * the fingerprint covers it through LOOP_VERSION. Workers announce its JSON Schema; every start
 * with the definition checks it.
 */
export const AGENT_INPUT: DeclaredInput = {
  jsonSchema: Object.freeze({
    anyOf: [{ type: "string" }, { type: "object", properties: { prompt: { type: "string" } }, required: ["prompt"] }],
  }),
  check: (value) => Promise.resolve(isPrompt(value) ? { ok: true, value } : { ok: false, issues: [{ path: "", message: "must be a prompt: a string or { prompt: string }" }] }),
};

/** The prompt of a run's input; refuses an input that has none (a run recorded before starts checked it, a child's). */
export function promptOf(def: AgentDefinition, runId: string, input: AgentInput): string {
  if (typeof input === "string") return input;
  if (isPrompt(input)) return input.prompt;
  throw new SteadError("STEAD_SCHEMA_MISMATCH", `agent ${def.name} needs a prompt: a string or { prompt: string } (run ${runId})`, {
    runId,
    fix: `stead run <file> --input '"what to do"'`,
  });
}
