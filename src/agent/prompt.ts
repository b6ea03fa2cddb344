import { SteadError } from "../errors.js";
import type { AgentDefinition, AgentInput } from "./definition-types.js";

/** The prompt of a run's input; refuses an input that has none. */
export function promptOf(def: AgentDefinition, runId: string, input: AgentInput): string {
  if (typeof input === "string") return input;
  if (input && typeof input === "object" && typeof input.prompt === "string") return input.prompt;
  throw new SteadError("STEAD_SCHEMA_MISMATCH", `agent ${def.name} needs a prompt: a string or { prompt: string } (run ${runId})`, {
    runId,
    fix: `stead run <file> --input '"what to do"'`,
  });
}
