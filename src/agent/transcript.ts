/**
 * A session's turns as people read them (`stead sessions show`), from the journals alone: no
 * agent code is loaded, so a turn recorded under another definition, or one whose file is gone,
 * reads as it was recorded. The walk follows the loop's journal layout (`loop.ts`): model call k
 * is step `model-k` (`model-k.2`, … after a quota park at `model-k.quota`), then each tool call
 * of its response in order, under the loop's key for it (`callKey`): its approval `approve:<key>`
 * (`.2`, … when asked again) and its step `tool:<key>`.
 */
import { OUTCOME_UNKNOWN } from "../engine/runs/holds.js";
import { decodeError, decodePayload } from "../engine/payload.js";
import { turnOutcome } from "../engine/sessions/session.js";
import { TERMINAL_STATUSES, type RunRow, type StepRow } from "../store/types.js";
import type { ToolDecision } from "./approvals.js";
import { INTERRUPTED_RESULT, parseOr, responseText, toolCalls, type ModelStepOutput } from "./messages.js";
import { asToolError, callKey, type ToolState } from "./tool-call.js";
import type { ApprovalView, ToolCallEntry, TranscriptEntry, TurnTranscript } from "../client/api-types.js";

export type { ApprovalView, ToolCallEntry, ToolCallStatus, TranscriptEntry, TurnTranscript } from "../client/api-types.js";

/** The turns of one session (in turn order) with their journals. */
export function sessionTranscript(turns: readonly { run: RunRow; journal: readonly StepRow[] }[]): TurnTranscript[] {
  let earlierOpen = false;
  return turns.map(({ run, journal }) => {
    const ended = TERMINAL_STATUSES.includes(run.status);
    const t = turnTranscript(run, journal);
    const queued = !ended && run.status === "pending" && earlierOpen;
    if (!ended) earlierOpen = true;
    return { ...t, queued };
  });
}

export function turnTranscript(run: RunRow, journal: readonly StepRow[]): TurnTranscript {
  const ended = TERMINAL_STATUSES.includes(run.status);
  const byId = new Map(journal.map((s) => [s.stepId, s]));
  const entries: TranscriptEntry[] = [{ type: "user", text: promptText(run.input) }];
  const state: ToolState = { approvedForRun: new Set(), toolSteps: 0, seenIds: new Set() };
  const live = run.status === "running";
  walk: for (let k = 1; ; k++) {
    let response: Extract<ModelStepOutput, { kind: "response" }> | undefined;
    for (let round = 1; response === undefined; round++) {
      const id = round === 1 ? `model-${k}` : `model-${k}.${round}`;
      const row = byId.get(id);
      if (!row) break walk;
      if (row.status === "completed") {
        const out = decodePayload<ModelStepOutput>(row.output);
        if (out.kind === "response") response = out;
        else entries.push({ type: "quota", step: id, model: out.model, resetAt: out.resetAt, message: out.message, parked: byId.get(`${id}.quota`)?.status === "waiting" });
        continue;
      }
      if (row.status === "failed") entries.push({ type: "model-call", step: id, status: "failed", attempt: row.attempt, message: decodeError(row.error).message });
      else entries.push({ type: "model-call", step: id, status: row.status === "retry" ? "retry" : live ? "in-flight" : "cut-off", attempt: row.attempt });
      break walk;
    }
    entries.push({ type: "model", step: `model-${k}`, model: response.model, text: responseText(response), reasoning: reasoningText(response), finishReason: response.finishReason, usage: response.usage });
    const calls = toolCalls(response);
    if (calls.length === 0) break;
    const nextModelCall = byId.has(`model-${k + 1}`);
    for (const call of calls) {
      const key = callKey(state, call.toolCallId, k);
      entries.push(toolEntry(byId, call, key, { ended, live, answered: nextModelCall }));
    }
  }
  const err = run.error ? decodeError(run.error) : null;
  return {
    turn: run.turn ?? 0,
    runId: run.id,
    status: run.status,
    outcome: ended ? turnOutcome(run.status, run.error) : null,
    queued: false,
    error: err ? { code: err.code ?? null, message: err.message } : null,
    entries,
  };
}

function toolEntry(
  byId: ReadonlyMap<string, StepRow>,
  call: { toolCallId: string; toolName: string; input: string },
  key: string,
  turn: { ended: boolean; live: boolean; answered: boolean },
): ToolCallEntry {
  const step = `tool:${key}`;
  const base = { type: "tool-call" as const, toolCallId: call.toolCallId, tool: call.toolName, args: parseOr(call.input), step };
  const approval = approvalOf(byId, key);
  const row = byId.get(step);
  if (row) {
    if (row.status === "completed") {
      if (row.error !== null) return { ...base, approval, status: "error", message: decodeError(row.error).message };
      const value = decodePayload<unknown>(row.output);
      const message = asToolError(value);
      return message === undefined ? { ...base, approval, status: "result", result: value } : { ...base, approval, status: "error", message };
    }
    if (row.status === "failed") {
      const rec = decodeError(row.error);
      if (rec.code === OUTCOME_UNKNOWN.code) return { ...base, approval, status: "interrupted", message: INTERRUPTED_RESULT };
      return { ...base, approval, status: "failed", message: rec.message };
    }
    // Dispatched, no outcome: in an ended turn, what later turns' model was told.
    if (turn.ended) return { ...base, approval, status: "interrupted", message: INTERRUPTED_RESULT };
    if (row.status === "retry") return { ...base, approval, status: "retry" };
    return { ...base, approval, status: turn.live ? "running" : "outcome-unknown" };
  }
  if (approval?.status === "denied") {
    return { ...base, approval, status: "denied", message: `denied${approval.by ? ` by ${approval.by}` : ""}${approval.reason ? `: ${approval.reason}` : ""}` };
  }
  if (turn.answered) return { ...base, approval, status: "answered-without-running" };
  if (turn.ended) return { ...base, approval, status: "interrupted", message: INTERRUPTED_RESULT };
  if (approval?.status === "waiting") return { ...base, approval, status: "waiting-approval" };
  return { ...base, approval, status: turn.live ? "running" : "not-run" };
}

/** The last round of a call's approval (a decision made for another call is asked again as `.2`, …). */
function approvalOf(byId: ReadonlyMap<string, StepRow>, key: string): ApprovalView | null {
  let row: StepRow | undefined;
  for (let round = 1; ; round++) {
    const next = byId.get(round === 1 ? `approve:${key}` : `approve:${key}.${round}`);
    if (!next) break;
    row = next;
  }
  if (!row) return null;
  if (row.status !== "completed") return { step: row.stepId, status: "waiting" };
  const d = decodePayload<Partial<ToolDecision> | null>(row.output) ?? {};
  return {
    step: row.stepId,
    status: d.approved ? "approved" : "denied",
    by: d.by ?? null,
    reason: d.reason ?? null,
    scope: d.scope ?? "once",
    ...(d.input !== undefined ? { editedArgs: d.input } : {}),
  };
}

function promptText(input: string): string {
  let v: unknown;
  try {
    v = decodePayload<unknown>(input);
  } catch {
    return input;
  }
  if (typeof v === "string") return v;
  if (v && typeof v === "object" && typeof (v as { prompt?: unknown }).prompt === "string") return (v as { prompt: string }).prompt;
  return JSON.stringify(v);
}

function reasoningText(r: Extract<ModelStepOutput, { kind: "response" }>): string {
  return r.content
    .filter((p): p is Extract<typeof p, { type: "reasoning" }> => p.type === "reasoning")
    .map((p) => p.text)
    .join("");
}
