import type { LanguageModelV3, LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { SteadError, errorMessage } from "../errors.js";
import type { StepInfo } from "../engine/context-types.js";
import type { AgentDefinition } from "./definition-types.js";
import type { LoopDriver } from "./driver.js";
import type { ModelResponse, ModelStepOutput } from "./messages.js";
import { streamOnce } from "./model-stream.js";
import { classifyProviderError, describeFailure, type ProviderFailure } from "./provider-errors.js";

/** Live text is published at most this often (one event per flush, never one journal row per token). */
const DELTA_FLUSH_MS = 200;

/**
 * The k-th model call of a run. One journal position per try after a quota park: `model-k`,
 * then `model-k.2`, … The step is an effect with retry "always": its intent is committed before
 * the request, so a cut-off call (and its streamed text, kept in `model.delta` events) shows as
 * an interrupted attempt, and the call is made again; a journaled response is never requested again.
 */
export async function modelCall(def: AgentDefinition, driver: LoopDriver, k: number, options: Omit<LanguageModelV3CallOptions, "abortSignal">): Promise<{ response: ModelResponse; stepId: string }> {
  for (let round = 1; ; round++) {
    const stepId = round === 1 ? `model-${k}` : `model-${k}.${round}`;
    // The streamed text of the attempt that answers is journaled in its response: its live events give way to it.
    const compacts = { type: "model.delta" as const, marker: (attempt: number) => ({ type: "model.text", data: { step: stepId, attempt } }) };
    const out = await driver.step<ModelStepOutput>(stepId, { kind: "model", effect: true, retry: "always", compacts }, (info) => tryModels(def, driver, info, options));
    if (out.kind === "response") return { response: out, stepId };
    await driver.quotaPark(`${stepId}.quota`, out.resetAt, { model: out.model, resetAt: out.resetAt, status: out.status, message: out.message });
  }
}

async function tryModels(def: AgentDefinition, driver: LoopDriver, info: StepInfo, options: Omit<LanguageModelV3CallOptions, "abortSignal">): Promise<ModelStepOutput> {
  const models = def.models;
  const attempts = Math.max(1, def.config.retry?.attempts ?? 4);
  const baseMs = def.config.retry?.baseMs ?? 1_000;
  const maxMs = def.config.retry?.maxMs ?? 30_000;
  let last: { model: LanguageModelV3; failure: ProviderFailure } | undefined;
  let tries = 0;
  for (let i = 0; i < models.length; i++) {
    const model = models[i] as LanguageModelV3;
    const name = `${model.provider}:${model.modelId}`;
    const next = models[i + 1];
    for (let t = 1; ; t++) {
      let failure: ProviderFailure;
      // Hazard: a later try follows a wait (or another model's failure) during which the lease
      // may have run out and another worker journaled this call's response; the step's own lease
      // check came before the first try only.
      if (tries > 0) await driver.leaseHeld();
      try {
        return await streamWithDeltas(model, driver, info, ++tries, options, def.config.idleTimeoutMs ?? 60_000);
      } catch (e) {
        if (driver.signal.aborted) throw e;
        failure = classifyProviderError(e, Date.now());
      }
      last = { model, failure };
      if (failure.kind === "fatal") {
        // A status means the provider answered; without one the call failed on this side (a model wrapper, a bad setting).
        const what = failure.status === null ? `the call to model ${name} failed` : `model ${name} refused the call`;
        throw new SteadError("STEAD_PROVIDER_REJECTED", `${what}: ${describeFailure(failure)}`, {
          runId: info.runId,
          stepId: info.stepId,
          status: failure.status,
          fix: failure.hint,
        });
      }
      if (failure.kind === "quota") {
        if (next) {
          await driver.emit([{ type: "model.failover", data: { step: info.stepId, from: name, to: `${next.provider}:${next.modelId}`, reason: "quota", resetAt: failure.resetAt } }]);
          break;
        }
        return { kind: "quota", model: name, resetAt: failure.resetAt, status: failure.status, message: failure.message };
      }
      if (t >= attempts) {
        if (next) await driver.emit([{ type: "model.failover", data: { step: info.stepId, from: name, to: `${next.provider}:${next.modelId}`, reason: `${attempts} tries failed: ${failure.message}` } }]);
        break;
      }
      const ceiling = Math.min(maxMs, baseMs * 2 ** (t - 1));
      const delayMs = Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
      await driver.emit([{ type: "model.retry", data: { step: info.stepId, model: name, try: t, status: failure.status, error: failure.message, delayMs } }]);
      await sleep(delayMs, driver.signal);
    }
  }
  const f = last?.failure;
  throw new SteadError(
    "STEAD_PROVIDER_UNAVAILABLE",
    `no model answered model call ${info.stepId}: ${f ? describeFailure(f) : "no model"}${models.length > 1 ? ` (tried ${models.length} models)` : ""}`,
    { runId: info.runId, stepId: info.stepId, fix: "check the provider's status and your network; the run fails so nothing is billed twice — start it again, or fork it, when the provider is back" },
  );
}

async function streamWithDeltas(
  model: LanguageModelV3,
  driver: LoopDriver,
  info: StepInfo,
  /** Which try within this attempt (retries and failovers): a reader of live text starts over at a new try. */
  tryNo: number,
  options: Omit<LanguageModelV3CallOptions, "abortSignal">,
  idleTimeoutMs: number,
): Promise<ModelResponse> {
  let pending = "";
  let timer: NodeJS.Timeout | undefined;
  const writes: Promise<void>[] = [];
  // One stream per try: a secret split across two flushes is redacted as in the whole text, before any event holds a piece of it.
  const redaction = driver.redactStream();
  let shown = "";
  const flush = (end?: { cutOff: boolean }) => {
    clearTimeout(timer);
    timer = undefined;
    const text = redaction.push(pending) + (end ? redaction.end(end) : "");
    pending = "";
    if (!text) return;
    shown += text;
    writes.push(driver.emit([{ type: "model.delta", data: { step: info.stepId, attempt: info.attempt, try: tryNo, text } }]).catch(() => undefined));
  };
  try {
    const r = await streamOnce(model, options, {
      signal: driver.signal,
      idleTimeoutMs,
      onText: (d) => {
        pending += d;
        timer ??= setTimeout(flush, DELTA_FLUSH_MS);
      },
    });
    flush({ cutOff: false });
    await Promise.all(writes);
    return journaledAsShown(r, shown);
  } catch (e) {
    flush({ cutOff: true });
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The response with its text as followers were shown it. The two differ only where the stream
 * hid more than the whole text's redaction would (a candidate past the stream's limit: a bearer
 * token that is a long JWT); journaling what was shown keeps the live text a prefix of the
 * journaled answer, so a follower shows the answer once. One text part only: with several, the
 * live text is their concatenation and cannot be split back.
 */
function journaledAsShown(r: ModelResponse, shown: string): ModelResponse {
  const texts = r.content.filter((p) => p.type === "text");
  const only = texts[0];
  if (texts.length !== 1 || !only || only.text === shown) return r;
  return { ...r, content: r.content.map((p) => (p === only ? { type: "text", text: shown } : p)) };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error(errorMessage(signal.reason) || "aborted"));
    const t = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new Error("aborted"));
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
