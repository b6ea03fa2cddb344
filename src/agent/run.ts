import type { LanguageModelV3Message } from "@ai-sdk/provider";
import type { WorkflowContext } from "../engine/context-types.js";
import type { EnginePort } from "../engine/port.js";
import type { AgentDefinition, AgentInput, AgentOutput } from "./definition-types.js";
import type { LoopDriver } from "./driver.js";
import { turnHistory } from "./history.js";
import { agentLoop, newTranscript } from "./loop.js";
import type { ModelResponse } from "./messages.js";
import { promptOf } from "./prompt.js";
import { Redactor } from "../redaction/redactor.js";
import { StreamRedactor } from "../redaction/stream-redactor.js";

/** The body of every agent definition: the loop on a live execution, through its engine port. */
export async function runAgent(def: AgentDefinition, ctx: WorkflowContext, input: AgentInput, x: EnginePort): Promise<AgentOutput> {
  const prompt = promptOf(def, x.run.id, input);
  let history: LanguageModelV3Message[] = [];
  if (x.run.sessionId) history = await turnHistory(def, await x.earlierTurns());
  if (def.config.init) await x.leaseHeld();
  await def.config.init?.({ runId: x.run.id, recovery: x.recovery, signal: x.signal, workspace: x.run.workspace });
  let final: { stepId: string; response: ModelResponse } | undefined;
  const out = await agentLoop(def, liveDriver(ctx, x), prompt, history, newTranscript(), (stepId, response) => (final = { stepId, response }));
  // The final text is the last model step's, journaled already: the run's output points at it.
  const texts = final ? final.response.content.flatMap((p, i) => (p.type === "text" ? [i] : [])) : [];
  if (final && texts.length === 1 && texts[0] !== undefined) x.storeOutputAs(out, [{ field: "text", step: final.stepId, path: ["content", texts[0], "text"] }]);
  return out;
}

function liveDriver(ctx: WorkflowContext, x: EnginePort): LoopDriver {
  return {
    runId: x.run.id,
    recovery: x.recovery,
    signal: x.signal,
    live: true,
    payloadLimit: x.payloadLimit,
    errorOutcomes: x.errorOutcomes === true,
    workspace: x.run.workspace,
    step: (id, options, fn) => x.step(id, options, fn),
    approval: (name, request) => (x.toolApproval ? x.toolApproval(name, request) : ctx.approval(name, request)),
    quotaPark: (id, wakeAt, request) => x.quotaPark(id, wakeAt, request),
    emit: (events) => x.emit(events),
    // A port of an engine from before stream redaction: its well-known shapes at least.
    redactStream: () => x.redactStream?.() ?? new StreamRedactor(Redactor.from()),
    leaseHeld: () => x.leaseHeld(),
  };
}
