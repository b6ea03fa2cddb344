/**
 * An agent run's conversation, rendered as text from what its journal records: each model step's
 * response (`{ kind: "response", model, content, finishReason, usage }`: text, reasoning, tool
 * calls) or quota park (`{ kind: "quota", model, resetAt }`), each tool step's result (`tool:<call
 * id>`), and the failovers and retries its events tell (`model.failover`, `model.retry`). Only the
 * steps of the journal page in view: the conversation is as bounded as the timeline.
 */
import type { Event } from "../../../src/client/index.js";
import type { Step } from "./runs-api.js";
import { brief, Json, LongText } from "./text.js";
import { Time } from "./time.js";

interface Part {
  type: string;
  text?: string;
  toolCallId?: string;
  toolName?: string;
  input?: string;
}

const obj = (v: unknown): Record<string, unknown> | null => (v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null);

/** Whether any step of the page is an agent's (a model call or a tool call). */
export const hasConversation = (steps: Step[]) => steps.some((s) => s.kind === "model" || s.kind === "tool");

function args(input: string | undefined): unknown {
  try {
    return JSON.parse(input ?? "null") as unknown;
  } catch {
    return input;
  }
}

export function Conversation(props: { input: unknown; steps: Step[]; offset: number; events: Event[] }) {
  const tools = new Map(props.steps.filter((s) => s.kind === "tool").map((s) => [s.id.replace(/^tool:/, ""), s]));
  const notes = props.events.filter((e) => e.type === "model.failover" || e.type === "model.retry");
  return (
    <div class="chat conversation">
      {props.offset === 0 && props.input !== undefined && props.input !== null ? (
        <div class="msg user">
          <p class="who-said">prompt</p>
          {typeof props.input === "string" ? <LongText text={props.input} /> : <Json value={props.input} />}
        </div>
      ) : null}
      {props.steps
        .filter((s) => s.kind === "model")
        .map((s) => (
          <ModelTurn key={s.seq} step={s} tools={tools} notes={notes.filter((e) => e.data.step === s.id)} />
        ))}
    </div>
  );
}

function ModelTurn(props: { step: Step; tools: Map<string, Step>; notes: Event[] }) {
  const s = props.step;
  const out = obj(s.output);
  return (
    <div class="msg agent" data-model-step={s.id}>
      <p class="who-said">
        <code>{s.id}</code>
        {out && typeof out.model === "string" ? <> · answered by {out.model}</> : null}
        {s.attempt > 1 ? <> · attempt {s.attempt}</> : null}
      </p>
      {props.notes.map((e) => (
        <p key={e.seq} class="note">
          {e.type === "model.failover"
            ? `failover from ${String(e.data.from)} to ${String(e.data.to)}: ${String(e.data.reason)}`
            : `retry ${String(e.data.try)} of ${String(e.data.model)}${e.data.status ? ` (status ${brief(e.data.status)})` : ""}: ${String(e.data.error)}`}
        </p>
      ))}
      {s.status !== "completed" && !out ? <p class="muted">{s.error ? `failed: ${s.error.message ?? ""}` : `${s.status}…`}</p> : null}
      {out?.kind === "quota" ? (
        <p class="note">
          quota of {String(out.model)} reached{typeof out.message === "string" ? `: ${out.message}` : ""}; parked until <Time at={typeof out.resetAt === "number" ? out.resetAt : null} />
        </p>
      ) : null}
      {out?.kind === "response"
        ? ((Array.isArray(out.content) ? out.content : []) as Part[]).map((p, i) => {
            if (p.type === "text") return <LongText key={i} text={p.text ?? ""} class="model-text" />;
            if (p.type === "reasoning")
              return (
                <details key={i} class="reasoning">
                  <summary>reasoning</summary>
                  <LongText text={p.text ?? ""} />
                </details>
              );
            if (p.type === "tool-call") {
              const result = props.tools.get(p.toolCallId ?? "");
              return (
                <div key={i} class="tool-call" data-tool-call={p.toolCallId}>
                  <p>
                    tool call <code>{p.toolName}</code> <span class="muted">({p.toolCallId})</span>
                  </p>
                  <Json value={args(p.input)} />
                  {result ? (
                    <div class="tool-result">
                      <p class="muted">result{result.status !== "completed" ? ` (${result.status})` : ""}</p>
                      {result.error ? <Json value={result.error} /> : typeof result.output === "string" ? <LongText text={result.output} /> : <Json value={result.output} />}
                    </div>
                  ) : (
                    <p class="muted">no result on this page</p>
                  )}
                </div>
              );
            }
            return <Json key={i} value={p} />;
          })
        : null}
      {out?.kind === "response" && obj(out.usage) ? (
        <p class="usage muted">
          tokens: {brief(obj(out.usage)?.inputTokens ?? "?")} in, {brief(obj(out.usage)?.outputTokens ?? "?")} out · {brief(out.finishReason ?? "")}
        </p>
      ) : null}
    </div>
  );
}
