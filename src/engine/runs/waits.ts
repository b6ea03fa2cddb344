import type { RequestKind } from "../../client/api-types.js";
import type { Mutation, WaitRow } from "../../store/types.js";

/**
 * What an approval's request is (WaitRow.requestKind): an agent's tool call (a decision on it
 * may carry edited arguments and scope), or a request the run's own code made. Stored beside the
 * request from schema 13; for waits opened before, read from the request's shape, once, here.
 */
export const REQUEST_KINDS = ["tool-call", "code"] as const satisfies readonly RequestKind[];
export type { RequestKind };

export function requestKindOf(w: Pick<WaitRow, "kind" | "request" | "requestKind">): RequestKind | null {
  if (w.kind !== "approval") return null;
  // Undefined as null: a store of one's own written before schema 13 returns no such field.
  if (w.requestKind !== null && w.requestKind !== undefined) return (REQUEST_KINDS as readonly string[]).includes(w.requestKind) ? (w.requestKind as RequestKind) : "code";
  return toolCallShaped(w.request) ? "tool-call" : "code";
}

/** The shape of an agent's tool approval request before schema 13 (src/agent/approvals.ts). */
function toolCallShaped(request: string | null): boolean {
  try {
    const r = JSON.parse(request ?? "null") as Record<string, unknown> | null;
    return typeof r === "object" && r !== null && typeof r.tool === "string" && typeof r.toolCallId === "string" && typeof r.fingerprint === "string";
  } catch {
    return false;
  }
}

/**
 * The mutations that answer an open wait: resolve it (which also completes its journal step with
 * `result` as the step's output) and, if the run is parked in `waiting`, make it runnable again.
 * A paused or held run stays where it is; its step is still completed, so replay sees the answer.
 */
export function resolveWaitUnit(
  runId: string,
  wait: { name: string; seq: number },
  result: string,
  by: string | null,
  event: { type: string; data: Record<string, unknown> },
  optional = false,
): Mutation[] {
  return [
    {
      runId,
      optional,
      expect: { openWait: wait.name },
      resolveWaits: [{ name: wait.name, seq: wait.seq, status: "resolved", result, by }],
      events: [event],
    },
    { runId, optional: true, expect: { status: ["waiting"] }, run: { status: "pending" }, events: [{ type: "run.runnable", data: { after: wait.name } }] },
  ];
}
