import type { Mutation } from "../store/types.js";

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
