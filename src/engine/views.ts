import type { EventRow, ListedHold, ListedRun, ListedWait, RunDamage, RunStatus, StepRow } from "../store/types.js";
import { decodeError, decodePayload, type ErrorRecord } from "./payload.js";
import { requestKindOf, type RequestKind } from "./waits.js";

/** A run as the API returns it: payloads parsed. */
export interface RunInfo {
  id: string;
  definition: string;
  status: RunStatus;
  input: unknown;
  output: unknown;
  error: ErrorRecord | null;
  parentId: string | null;
  /** The session this run is a turn of, and its turn number; null for a run outside sessions. */
  sessionId: string | null;
  turn: number | null;
  fingerprint: string | null;
  module: string | null;
  fence: number;
  lease: { owner: string; expiresAt: number | null; host: string | null; pid: number | null } | null;
  lostClaims: number;
  pauseRequested: boolean;
  createdAt: number;
  updatedAt: number;
  /**
   * In a listing only: a sealed value of the run failed to open (its bytes were changed, or the
   * key is not the one it was sealed with); the message names the row. When it is the run's own
   * row, `input`, `output` and `error` are null, unread; a listing that reads the run's open waits
   * and holds (`stead ps`, `GET /runs`) marks the run for a damaged one of those too, its other
   * fields as stored. Reading the run itself refuses with this error.
   */
  damaged?: RunDamage;
}

export interface StepView {
  seq: number;
  id: string;
  kind: string;
  status: string;
  attempt: number;
  output: unknown;
  error: ErrorRecord | null;
  startedAt: number;
  completedAt: number | null;
}

export interface WaitView {
  name: string;
  kind: string;
  status: string;
  request: unknown;
  /** An approval's: "tool-call" (an agent's tool call: decisions take edited arguments and scope) or "code"; null for other kinds. */
  requestKind: RequestKind | null;
  wakeAt: number | null;
  result: unknown;
  createdAt: number;
  resolvedAt: number | null;
  resolvedBy: string | null;
  /** In a listing only: its sealed values failed to open; `request` and `result` are then absent, unread. */
  damaged?: RunDamage;
}

export interface HoldView {
  id: number;
  runId: string;
  kind: string;
  stepId: string | null;
  reason: string;
  details: Record<string, unknown>;
  status: string;
  choice: string | null;
  createdAt: number;
  releasedAt: number | null;
  releasedBy: string | null;
  /** In a listing only: its sealed values failed to open; `reason` is then "" and `details` {}, unread. */
  damaged?: RunDamage;
}

export interface EventView {
  seq: number;
  runId: string;
  type: string;
  at: number;
  data: Record<string, unknown>;
}

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
