import type { LanguageModelV3Message, LanguageModelV3ToolResultOutput } from "@ai-sdk/provider";

/**
 * The provider-neutral form a model response is journaled in (one step row per model call).
 * Tool-call `input` stays the JSON text the model produced: parsing it is the loop's job, so a
 * malformed call is journaled as it came and answered with a tool error.
 */
export type ResponsePart =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string }
  | { type: "tool-call"; toolCallId: string; toolName: string; input: string };

export interface ModelResponse {
  kind: "response";
  /** `provider:modelId` of the model that answered. */
  model: string;
  content: ResponsePart[];
  finishReason: string;
  usage: { inputTokens: number; outputTokens: number };
}

/** The last model in the failover list hit its quota: the loop parks until `resetAt`. */
export interface QuotaOutcome {
  kind: "quota";
  model: string;
  resetAt: number;
  status: number | null;
  message: string;
}

export type ModelStepOutput = ModelResponse | QuotaOutcome;

export const INTERRUPTED_RESULT = "interrupted: outcome unknown";

export function userMessage(text: string): LanguageModelV3Message {
  return { role: "user", content: [{ type: "text", text }] };
}

export function assistantMessage(r: ModelResponse): LanguageModelV3Message {
  return {
    role: "assistant",
    content: r.content.map((p) => {
      if (p.type === "text") return { type: "text" as const, text: p.text };
      if (p.type === "reasoning") return { type: "reasoning" as const, text: p.text };
      return { type: "tool-call" as const, toolCallId: p.toolCallId, toolName: p.toolName, input: parseOr(p.input) };
    }),
  };
}

export interface ToolResult {
  toolCallId: string;
  toolName: string;
  output: LanguageModelV3ToolResultOutput;
}

export function toolMessage(results: ToolResult[]): LanguageModelV3Message {
  return { role: "tool", content: results.map((r) => ({ type: "tool-result" as const, ...r })) };
}

export function valueOutput(value: unknown): LanguageModelV3ToolResultOutput {
  if (typeof value === "string") return { type: "text", value };
  if (value === undefined) return { type: "text", value: "" };
  return { type: "json", value: value as never };
}

export function errorOutput(message: string): LanguageModelV3ToolResultOutput {
  return { type: "error-text", value: message };
}

export function toolCalls(r: ModelResponse): Extract<ResponsePart, { type: "tool-call" }>[] {
  return r.content.filter((p): p is Extract<ResponsePart, { type: "tool-call" }> => p.type === "tool-call");
}

export function responseText(r: ModelResponse): string {
  return r.content
    .filter((p): p is Extract<ResponsePart, { type: "text" }> => p.type === "text")
    .map((p) => p.text)
    .join("");
}

/** The JSON a model wrote, parsed; the text itself when it is not JSON. */
export function parseOr(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
