/**
 * A deterministic AI SDK language model for offline demos and tests: `respond` reads the prompt
 * (the transcript so far) and says what the model answers. No network, no key.
 *
 * Invariant: the answer is a function of the prompt only. There is no call counter, so a process
 * that replaces a killed one and sends the same transcript gets the same text, the same tool calls
 * and the same tool-call ids.
 */
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3GenerateResult,
  LanguageModelV3Prompt,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
  LanguageModelV3ToolResultOutput,
  LanguageModelV3Usage,
} from "@ai-sdk/provider";
import { SteadError } from "../errors.js";

export interface ScriptedToolCall {
  name: string;
  /** The tool's arguments; sent to the caller JSON-encoded. */
  input: unknown;
  /** Default: `call_<model turn>_<index>` (the turn is the number of assistant messages in the prompt). */
  id?: string;
}

export interface ScriptedTurn {
  text?: string;
  toolCalls?: ScriptedToolCall[];
  /** Default: about one token per 4 characters of prompt (input) and of answer (output). */
  usage?: { inputTokens?: number; outputTokens?: number };
  /** Default: "tool-calls" when there are tool calls, else "stop". */
  finishReason?: LanguageModelV3FinishReason["unified"];
}

export interface ScriptedModelOptions {
  modelId?: string;
  provider?: string;
  /** Must depend on `prompt` only (and the call's tools/options), never on how often it was called. */
  respond(prompt: LanguageModelV3Prompt, call: LanguageModelV3CallOptions): ScriptedTurn | Promise<ScriptedTurn>;
  /** Pause between streamed parts (text deltas, tool calls), so a kill can land mid-stream. */
  chunkDelayMs?: number;
}

export function scriptedModel(options: ScriptedModelOptions): LanguageModelV3 {
  const modelId = options.modelId ?? "scripted-model";
  const provider = options.provider ?? "scripted";

  async function answer(call: LanguageModelV3CallOptions): Promise<Answer> {
    throwIfAborted(call.abortSignal);
    const turn = await options.respond(call.prompt, call);
    throwIfAborted(call.abortSignal);
    return resolveTurn(turn, call.prompt, modelId);
  }

  return {
    specificationVersion: "v3",
    provider,
    modelId,
    supportedUrls: {},

    async doGenerate(call: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> {
      const a = await answer(call);
      const content: LanguageModelV3Content[] = [];
      if (a.text.length > 0) content.push({ type: "text", text: a.text });
      for (const c of a.toolCalls) content.push({ type: "tool-call", toolCallId: c.toolCallId, toolName: c.toolName, input: c.input });
      return { content, finishReason: a.finishReason, usage: a.usage, warnings: [], response: { id: a.responseId, modelId } };
    },

    async doStream(call: LanguageModelV3CallOptions): Promise<LanguageModelV3StreamResult> {
      const a = await answer(call);
      const parts = streamParts(a, modelId);
      const delayMs = options.chunkDelayMs ?? 0;
      const signal = call.abortSignal;
      // Wakes a pending delay when the reader cancels, so no timer outlives the stream.
      const cancelled = new AbortController();
      let next = 0;
      let contentSent = 0;
      return {
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          cancel() {
            cancelled.abort();
          },
          async pull(controller) {
            const part = parts[next++];
            if (part === undefined) {
              controller.close();
              return;
            }
            const isContent = part.type === "text-delta" || part.type === "tool-call";
            if (isContent && contentSent > 0 && delayMs > 0) await sleep(delayMs, signal, cancelled.signal);
            if (cancelled.signal.aborted) return;
            if (signal?.aborted) {
              controller.error(abortReason(signal));
              return;
            }
            if (isContent) contentSent++;
            controller.enqueue(part);
          },
        }),
      };
    },
  };
}

/** The text of the last user message (all its text parts joined), or "" if there is none. */
export function lastUserText(prompt: LanguageModelV3Prompt): string {
  for (let i = prompt.length - 1; i >= 0; i--) {
    const m = prompt[i];
    if (m?.role === "user") return m.content.map((p) => (p.type === "text" ? p.text : "")).join("");
  }
  return "";
}

export interface PromptToolResult {
  toolCallId: string;
  toolName: string;
  output: LanguageModelV3ToolResultOutput;
}

/** Every tool result in the prompt, in transcript order. */
export function toolResults(prompt: LanguageModelV3Prompt): PromptToolResult[] {
  const out: PromptToolResult[] = [];
  for (const m of prompt) {
    if (m.role !== "tool") continue;
    for (const p of m.content) if (p.type === "tool-result") out.push({ toolCallId: p.toolCallId, toolName: p.toolName, output: p.output });
  }
  return out;
}

/** How many model answers the prompt already holds (its assistant messages): the current turn's 0-based position. */
export function modelTurns(prompt: LanguageModelV3Prompt): number {
  return prompt.filter((m) => m.role === "assistant").length;
}

interface Answer {
  responseId: string;
  text: string;
  toolCalls: { toolCallId: string; toolName: string; input: string }[];
  finishReason: LanguageModelV3FinishReason;
  usage: LanguageModelV3Usage;
}

function resolveTurn(turn: ScriptedTurn, prompt: LanguageModelV3Prompt, modelId: string): Answer {
  if (turn === null || typeof turn !== "object") {
    throw new SteadError("STEAD_INVALID_DEFINITION", `scripted model ${modelId}: respond() returned ${String(turn)}, not a turn`, {
      fix: "return an object like { text } or { toolCalls: [{ name, input }] } from respond()",
    });
  }
  const position = modelTurns(prompt);
  const text = turn.text ?? "";
  const toolCalls = (turn.toolCalls ?? []).map((c, i) => {
    if (typeof c?.name !== "string" || c.name === "") {
      throw new SteadError("STEAD_INVALID_DEFINITION", `scripted model ${modelId}: tool call ${i} of turn ${position} has no name`, {
        fix: "give every scripted tool call a tool name",
      });
    }
    const input = JSON.stringify(c.input === undefined ? {} : c.input) as string | undefined;
    if (input === undefined) {
      throw new SteadError("STEAD_INVALID_DEFINITION", `scripted model ${modelId}: the input of tool call ${c.name} is not JSON-serializable`, {
        fix: "give scripted tool calls plain JSON inputs",
      });
    }
    return { toolCallId: c.id ?? `call_${position}_${i}`, toolName: c.name, input };
  });
  const unified = turn.finishReason ?? (toolCalls.length > 0 ? "tool-calls" : "stop");
  const inputTokens = turn.usage?.inputTokens ?? estimateTokens(JSON.stringify(prompt));
  const outputTokens = turn.usage?.outputTokens ?? estimateTokens(text + toolCalls.map((c) => c.toolName + c.input).join(""));
  return {
    responseId: `scripted-${position}`,
    text,
    toolCalls,
    finishReason: { unified, raw: unified },
    usage: {
      inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: outputTokens, text: outputTokens, reasoning: 0 },
    },
  };
}

/** The parts a streaming provider would send: text deltas a word at a time, then each tool call's input and call. */
function streamParts(a: Answer, modelId: string): LanguageModelV3StreamPart[] {
  const parts: LanguageModelV3StreamPart[] = [{ type: "stream-start", warnings: [] }, { type: "response-metadata", id: a.responseId, modelId }];
  if (a.text.length > 0) {
    parts.push({ type: "text-start", id: "txt-0" });
    for (const delta of splitWords(a.text)) parts.push({ type: "text-delta", id: "txt-0", delta });
    parts.push({ type: "text-end", id: "txt-0" });
  }
  for (const c of a.toolCalls) {
    parts.push({ type: "tool-input-start", id: c.toolCallId, toolName: c.toolName });
    parts.push({ type: "tool-input-delta", id: c.toolCallId, delta: c.input });
    parts.push({ type: "tool-input-end", id: c.toolCallId });
    parts.push({ type: "tool-call", toolCallId: c.toolCallId, toolName: c.toolName, input: c.input });
  }
  parts.push({ type: "finish", finishReason: a.finishReason, usage: a.usage });
  return parts;
}

/** Word-sized pieces whose concatenation is exactly `text` (whitespace stays with the word before it). */
export function splitWords(text: string): string[] {
  return text.match(/^\s+|\S+\s*/g) ?? [text];
}

function estimateTokens(s: string): number {
  return Math.ceil(s.length / 4);
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortReason(signal);
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

/** Resolves after `ms`, or at once when a signal is (or becomes) aborted. */
function sleep(ms: number, ...signals: (AbortSignal | undefined)[]): Promise<void> {
  const live = signals.filter((s): s is AbortSignal => s !== undefined);
  if (live.some((s) => s.aborted)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      for (const s of live) s.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    for (const s of live) s.addEventListener("abort", done, { once: true });
  });
}
