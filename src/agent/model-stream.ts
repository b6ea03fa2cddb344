import type { LanguageModelV3, LanguageModelV3CallOptions } from "@ai-sdk/provider";
import type { ModelResponse, ResponsePart } from "./messages.js";

export interface StreamHooks {
  /** Text as it arrives; the caller batches it into live events. */
  onText(delta: string): void;
  signal: AbortSignal;
  /** A stream silent this long is cut (a transient failure). */
  idleTimeoutMs: number;
}

export class StreamIdleError extends Error {
  constructor(ms: number) {
    super(`the model stream sent nothing for ${ms} ms`);
    this.name = "StreamIdleError";
  }
}

/** One call of one model, streamed to its end. Throws what the provider throws (classified by the caller). */
export async function streamOnce(model: LanguageModelV3, options: Omit<LanguageModelV3CallOptions, "abortSignal">, hooks: StreamHooks): Promise<ModelResponse> {
  const ctl = new AbortController();
  const onOuterAbort = () => ctl.abort(hooks.signal.reason);
  hooks.signal.addEventListener("abort", onOuterAbort, { once: true });
  let idle: NodeJS.Timeout | undefined;
  let idleFired = false;
  const arm = () => {
    clearTimeout(idle);
    idle = setTimeout(() => {
      idleFired = true;
      ctl.abort(new StreamIdleError(hooks.idleTimeoutMs));
    }, hooks.idleTimeoutMs);
  };
  const texts = new Map<string, { type: "text" | "reasoning"; text: string }>();
  const order: (string | ResponsePart)[] = [];
  let finishReason = "unknown";
  const usage = { inputTokens: 0, outputTokens: 0 };
  try {
    arm();
    const { stream } = await model.doStream({ ...options, abortSignal: ctl.signal });
    const reader = stream.getReader();
    for (;;) {
      const { done, value: part } = await reader.read();
      if (done) break;
      arm();
      switch (part.type) {
        case "text-delta":
        case "reasoning-delta": {
          const kind = part.type === "text-delta" ? "text" : "reasoning";
          const key = `${kind}:${part.id}`;
          let t = texts.get(key);
          if (!t) {
            t = { type: kind, text: "" };
            texts.set(key, t);
            order.push(key);
          }
          t.text += part.delta;
          if (kind === "text") hooks.onText(part.delta);
          break;
        }
        case "tool-call":
          order.push({ type: "tool-call", toolCallId: part.toolCallId, toolName: part.toolName, input: part.input });
          break;
        case "finish":
          finishReason = part.finishReason.unified;
          usage.inputTokens = part.usage.inputTokens.total ?? 0;
          usage.outputTokens = part.usage.outputTokens.total ?? 0;
          break;
        case "error":
          throw part.error;
        default:
          break;
      }
    }
  } catch (e) {
    // Ends the request too: a stream that failed mid-way must not keep its connection open.
    if (!ctl.signal.aborted) ctl.abort(e);
    if (idleFired) throw new StreamIdleError(hooks.idleTimeoutMs);
    throw e;
  } finally {
    clearTimeout(idle);
    hooks.signal.removeEventListener("abort", onOuterAbort);
  }
  const content: ResponsePart[] = [];
  for (const o of order) {
    if (typeof o !== "string") content.push(o);
    else {
      const t = texts.get(o);
      if (t && t.text.length > 0) content.push({ type: t.type, text: t.text });
    }
  }
  return { kind: "response", model: `${model.provider}:${model.modelId}`, content, finishReason, usage };
}
