import type { LanguageModelV3CallOptions, LanguageModelV3FunctionTool, LanguageModelV3Message } from "@ai-sdk/provider";
import { SteadError } from "../errors.js";
import type { AgentDefinition, AgentOutput } from "./definition-types.js";
import type { LoopDriver } from "./driver.js";
import { INTERRUPTED_RESULT, assistantMessage, errorOutput, responseText, toolCalls, toolMessage, userMessage, type ModelResponse, type ToolResult } from "./messages.js";
import { modelCall } from "./model-step.js";
import { callKey, callTool, type ToolState } from "./tool-call.js";

const DEFAULT_MAX_TURNS = 20;
const DEFAULT_MAX_STEPS = 200;

/**
 * The transcript a loop builds. `messages` is always well formed: every tool call is followed by
 * its result before the next model call (a loop cut off mid-tools is closed with
 * "interrupted: outcome unknown" by `closeTranscript`).
 */
export interface Transcript {
  messages: LanguageModelV3Message[];
  /** Tool calls of the last assistant message still waiting for results. */
  open: { toolCallId: string; toolName: string }[];
  results: ToolResult[];
}

/**
 * The agent loop: model call, then its tool calls one by one in order, until the model answers
 * without tool calls. Every count it enforces is derived from journaled outcomes, so a resumed
 * run reaches the same counts and cannot exceed its limits.
 */
export async function agentLoop(
  def: AgentDefinition,
  driver: LoopDriver,
  prompt: string,
  history: LanguageModelV3Message[],
  transcript: Transcript,
  /** Told the step whose response ended the loop (the final answer), before the loop returns. */
  onFinal?: (stepId: string, response: ModelResponse) => void,
): Promise<AgentOutput> {
  const cfg = def.config;
  const maxTurns = cfg.maxTurns ?? DEFAULT_MAX_TURNS;
  const maxSteps = cfg.maxSteps ?? DEFAULT_MAX_STEPS;
  const tools: LanguageModelV3FunctionTool[] = Object.entries(cfg.tools ?? {}).map(([name, t]) => ({
    type: "function",
    name,
    ...(t.description ? { description: t.description } : {}),
    inputSchema: t.jsonSchema,
  }));
  transcript.messages.push(userMessage(prompt));
  const state: ToolState = { approvedForRun: new Set(), toolSteps: 0, seenIds: new Set() };
  const usage = { inputTokens: 0, outputTokens: 0 };
  let modelCalls = 0;
  const limit = (what: string, n: number) =>
    new SteadError("STEAD_AGENT_LIMIT", `agent ${def.name} reached ${what} (${n}) in run ${driver.runId}`, {
      runId: driver.runId,
      fix: `raise ${what} in agent("${def.name}", { ... }) and start the task again, or fork this run under the new definition`,
    });
  // An earlier turn read back is what it was: limits changed since do not cut it short.
  const enforce = driver.live;
  const stepGuard = () => {
    if (enforce && modelCalls + state.toolSteps >= maxSteps) throw limit("maxSteps", maxSteps);
  };
  for (;;) {
    if (enforce && modelCalls >= maxTurns) throw limit("maxTurns", maxTurns);
    stepGuard();
    modelCalls++;
    const options: Omit<LanguageModelV3CallOptions, "abortSignal"> = {
      prompt: [...(cfg.instructions ? [{ role: "system" as const, content: cfg.instructions }] : []), ...history, ...transcript.messages],
      ...(tools.length ? { tools, toolChoice: { type: "auto" as const } } : {}),
      ...(cfg.temperature !== undefined ? { temperature: cfg.temperature } : {}),
      ...(cfg.maxOutputTokens !== undefined ? { maxOutputTokens: cfg.maxOutputTokens } : {}),
    };
    const { response, stepId } = await modelCall(def, driver, modelCalls, options);
    usage.inputTokens += response.usage.inputTokens;
    usage.outputTokens += response.usage.outputTokens;
    transcript.messages.push(assistantMessage(response));
    const calls = toolCalls(response);
    if (calls.length === 0) {
      onFinal?.(stepId, response);
      return { text: responseText(response), finishReason: response.finishReason, modelCalls, toolCalls: state.toolSteps, usage };
    }
    if (enforce && cfg.tokenBudget !== undefined && usage.inputTokens + usage.outputTokens > cfg.tokenBudget) throw limit("tokenBudget", cfg.tokenBudget);
    transcript.open = calls.map((c) => ({ toolCallId: c.toolCallId, toolName: c.toolName }));
    transcript.results = [];
    for (const call of calls) {
      transcript.results.push(await callTool(def, driver, call, callKey(state, call.toolCallId, modelCalls), state, stepGuard));
    }
    transcript.messages.push(toolMessage(transcript.results));
    transcript.open = [];
    transcript.results = [];
  }
}

export function newTranscript(): Transcript {
  return { messages: [], open: [], results: [] };
}

/** The transcript as the model must see it: tool calls cut off without a result get "interrupted: outcome unknown". */
export function closeTranscript(t: Transcript): LanguageModelV3Message[] {
  if (t.open.length === 0) return t.messages;
  const done = new Set(t.results.map((r) => r.toolCallId));
  const results = [...t.results, ...t.open.filter((c) => !done.has(c.toolCallId)).map((c) => ({ ...c, output: errorOutput(INTERRUPTED_RESULT) }))];
  return [...t.messages, toolMessage(results)];
}
