/**
 * The views the engine builds of its rows for its callers. Their shapes are the HTTP API's, so
 * they are declared once in client/api-types.ts (the `wire` layer, below every other) and
 * re-exported here.
 */
import type { EventView, HoldView, RunInfo, StepView, WaitView } from "../../client/api-types.js";
import type { EventRow, ListedHold, ListedRun, ListedWait, StepRow } from "../../store/types.js";
import { decodeError, decodePayload } from "../payload.js";
import { requestKindOf } from "./waits.js";

export type { EventView, HoldView, RunInfo, StepView, WaitView } from "../../client/api-types.js";

/** One read of the event stream (`stead.runs.eventsAfter`). */
export interface EventStreamPage {
  /** New events, each once across reads, in commit order (one run's in `seq` order). */
  events: EventView[];
  /** Where the next read continues (an SSE id): pass it back unchanged. */
  position: string;
  /** Where a read continues after each event (`positions[i]` after `events[i]`; the last is `position`). */
  positions: string[];
}

const safeParse = (t: string | null): unknown => {
  if (t === null) return undefined;
  try {
    return decodePayload(t);
  } catch {
    return t;
  }
};

export function runView(r: ListedRun): RunInfo {
  return {
    id: r.id,
    definition: r.definition,
    status: r.status,
    input: safeParse(r.input),
    output: safeParse(r.output),
    error: r.error ? decodeError(r.error) : null,
    parentId: r.parentId,
    sessionId: r.sessionId,
    turn: r.turn,
    fingerprint: r.fingerprint,
    module: r.module,
    fence: r.fence,
    lease: r.leaseOwner ? { owner: r.leaseOwner, expiresAt: r.leaseExpiresAt, host: r.ownerHost, pid: r.ownerPid } : null,
    lostClaims: r.lostClaims,
    pauseRequested: r.pauseRequested,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    ...(r.damaged ? { input: null, output: null, error: null, damaged: r.damaged } : {}),
  };
}

export function stepView(s: StepRow): StepView {
  return {
    seq: s.seq,
    id: s.stepId,
    kind: s.kind,
    status: s.status,
    attempt: s.attempt,
    output: safeParse(s.output),
    error: s.error ? decodeError(s.error) : null,
    startedAt: s.startedAt,
    completedAt: s.completedAt,
  };
}

export function waitView(w: ListedWait): WaitView {
  return {
    name: w.name,
    kind: w.kind,
    status: w.status,
    request: safeParse(w.request),
    requestKind: requestKindOf(w),
    wakeAt: w.wakeAt,
    result: safeParse(w.result),
    createdAt: w.createdAt,
    resolvedAt: w.resolvedAt,
    resolvedBy: w.resolvedBy,
    ...(w.damaged ? { damaged: w.damaged } : {}),
  };
}

export function holdView(h: ListedHold): HoldView {
  let details: Record<string, unknown> = {};
  try {
    details = JSON.parse(h.details) as Record<string, unknown>;
  } catch {
    details = { raw: h.details };
  }
  return {
    id: h.id,
    runId: h.runId,
    kind: h.kind,
    stepId: h.stepId,
    reason: h.reason,
    details,
    status: h.status,
    choice: h.choice,
    createdAt: h.createdAt,
    releasedAt: h.releasedAt,
    releasedBy: h.releasedBy,
    ...(h.damaged ? { damaged: h.damaged } : {}),
  };
}

export function eventView(e: EventRow): EventView {
  let data: Record<string, unknown> = {};
  try {
    data = JSON.parse(e.data) as Record<string, unknown>;
  } catch {
    data = { raw: e.data };
  }
  return { seq: e.seq, runId: e.runId, type: e.type, at: e.at, data };
}
