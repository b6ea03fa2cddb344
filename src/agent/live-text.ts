import type { ModelResponse } from "./messages.js";
import { responseText } from "./messages.js";

/**
 * The text a journaled model step answered with: what a `model.text` event stands for (the
 * step's live `model.delta` events were compacted into its journaled response). Undefined when the
 * output is not a model response.
 */
export function modelStepText(output: unknown): string | undefined {
  const r = output as Partial<ModelResponse> | null | undefined;
  if (!r || r.kind !== "response" || !Array.isArray(r.content)) return undefined;
  return responseText(r as ModelResponse);
}
