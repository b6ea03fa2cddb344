import type { LanguageModelV3Message } from "@ai-sdk/provider";
import { SteadError } from "../errors.js";
import type { WorkflowContext } from "../engine/context-types.js";
import { engineOf, type EngineInternals } from "../engine/internals.js";
import type { AgentDefinition, AgentInput, AgentOutput } from "./definition.js";
import type { LoopDriver } from "./driver.js";
import { turnHistory } from "./history.js";
import { agentLoop, newTranscript } from "./loop.js";
import type { ModelResponse } from "./messages.js";
import { outputRef } from "../engine/output-refs.js";

/** The function of every agent definition: the loop on a live execution. */
export async function runAgent(def: AgentDefinition, ctx: WorkflowContext, input: AgentInput): Promise<AgentOutput> {
  const x = engineOf(ctx);
  const prompt = promptOf(def, x.run.id, input);
  let history: LanguageModelV3Message[] = [];
  if (x.run.sessionId) history = await turnHistory(def, await x.earlierTurns());
  await def.config.init?.({ runId: x.run.id, recovery: x.recovery, signal: x.signal, workspace: x.run.workspace });
  let final: { stepId: string; response: ModelResponse } | undefined;
  const out = await agentLoop(def, liveDriver(ctx, x), prompt, history, newTranscript(), (stepId, response) => (final = { stepId, response }));
  // The final text is the last model step's, journaled already: the run's output points at it.
  const texts = final ? final.response.content.flatMap((p, i) => (p.type === "text" ? [i] : [])) : [];
  if (final && texts.length === 1 && texts[0] !== undefined) x.storeOutputAs({ ...out, text: outputRef(final.stepId, ["content", texts[0], "text"]) });
  return out;
}

function liveDriver(ctx: WorkflowContext, x: EngineInternals): LoopDriver {
  return {
    runId: x.run.id,
    recovery: x.recovery,
    signal: x.signal,
    live: true,
    payloadLimit: x.payloadLimit,
    workspace: x.run.workspace,
    step: (id, options, fn) => x.step(id, options, fn),
    approval: (name, request) => ctx.approval(name, request),
    quotaPark: (id, wakeAt, request) => x.quotaPark(id, wakeAt, request),
    emit: (events) => x.emit(events),
  };
}

export function promptOf(def: AgentDefinition, runId: string, input: AgentInput): string {
  if (typeof input === "string") return input;
  if (input && typeof input === "object" && typeof input.prompt === "string") return input.prompt;
  throw new SteadError("STEAD_SCHEMA_MISMATCH", `agent ${def.name} needs a prompt: a string or { prompt: string } (run ${runId})`, {
    runId,
    fix: `stead run <file> --input '"what to do"'`,
  });
}
