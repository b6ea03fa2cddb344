/**
 * Row mappers shared by every SQL store: drivers hand back text, numbers (or numeric strings for
 * 64-bit integers), booleans or 0/1. Kinds and statuses are passed through as stored text, never
 * checked against their unions: a kind a newer Stead wrote reads back unchanged.
 */
import type { EventRow, IdempotencyRow, HoldKind, HoldRow, HoldStatus, RunRow, RunStatus, SessionSummary, StepKind, StepRow, StepStatus, WaitKind, WaitRow, WaitStatus } from "./types.js";

type Raw = Record<string, unknown>;

// SQLite hands back strings, numbers, bigints, buffers or null; columns read here are text or integers.
const str = (v: unknown): string => (typeof v === "string" ? v : typeof v === "number" || typeof v === "bigint" ? v.toString() : JSON.stringify(v));
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : str(v));
const num = (v: unknown): number => Number(v);
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export function toRun(r: Raw): RunRow {
  return {
    id: str(r.id),
    definition: str(r.definition),
    module: strOrNull(r.module),
    fingerprint: strOrNull(r.fingerprint),
    status: str(r.status) as RunStatus,
    input: str(r.input),
    output: strOrNull(r.output),
    error: strOrNull(r.error),
    parentId: strOrNull(r.parent_id),
    parentStepId: strOrNull(r.parent_step_id),
    fence: num(r.fence),
    leaseOwner: strOrNull(r.lease_owner),
    leaseExpiresAt: numOrNull(r.lease_expires_at),
    ownerHost: strOrNull(r.owner_host),
    ownerPid: numOrNull(r.owner_pid),
    ownerStart: strOrNull(r.owner_start),
    lostClaims: num(r.lost_claims),
    pauseRequested: num(r.pause_requested) !== 0,
    sessionId: strOrNull(r.session_id),
    turn: numOrNull(r.turn),
    workspace: strOrNull(r.workspace),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
  };
}

export function toStep(r: Raw): StepRow {
  return {
    runId: str(r.run_id),
    seq: num(r.seq),
    stepId: str(r.step_id),
    kind: str(r.kind) as StepKind,
    status: str(r.status) as StepStatus,
    attempt: num(r.attempt),
    output: strOrNull(r.output),
    error: strOrNull(r.error),
    startedAt: num(r.started_at),
    completedAt: numOrNull(r.completed_at),
    checkpoint: strOrNull(r.checkpoint),
  };
}

export function toWait(r: Raw): WaitRow {
  return {
    runId: str(r.run_id),
    name: str(r.name),
    kind: str(r.kind) as WaitKind,
    status: str(r.status) as WaitStatus,
    seq: num(r.seq),
    request: strOrNull(r.request),
    wakeAt: numOrNull(r.wake_at),
    result: strOrNull(r.result),
    createdAt: num(r.created_at),
    resolvedAt: numOrNull(r.resolved_at),
    resolvedBy: strOrNull(r.resolved_by),
  };
}

export function toHold(r: Raw): HoldRow {
  return {
    id: num(r.id),
    runId: str(r.run_id),
    kind: str(r.kind) as HoldKind,
    stepId: strOrNull(r.step_id),
    seq: numOrNull(r.seq),
    reason: str(r.reason),
    details: str(r.details),
    status: str(r.status) as HoldStatus,
    choice: strOrNull(r.choice),
    createdAt: num(r.created_at),
    releasedAt: numOrNull(r.released_at),
    releasedBy: strOrNull(r.released_by),
  };
}

export function toIdempotency(r: Raw): IdempotencyRow {
  return {
    verb: str(r.verb),
    scope: str(r.scope),
    key: str(r.key),
    digest: str(r.digest),
    summary: str(r.summary),
    result: str(r.result),
    actor: strOrNull(r.actor),
    createdAt: num(r.created_at),
    expiresAt: num(r.expires_at),
  };
}

export function toEvent(r: Raw): EventRow {
  return { seq: num(r.seq), runId: str(r.run_id), type: str(r.type), at: num(r.at), data: str(r.data) };
}

/** A row of the stores' session summary query (see SESSIONS_SQL in each store). */
export function toSession(r: Raw): SessionSummary {
  const current = r.current_id === null || r.current_id === undefined ? null : { runId: str(r.current_id), turn: num(r.current_turn), status: str(r.current_status) as RunStatus };
  const last =
    r.last_id === null || r.last_id === undefined
      ? null
      : { runId: str(r.last_id), turn: num(r.last_turn), status: str(r.last_status) as RunStatus, error: strOrNull(r.last_error) };
  return {
    sessionId: str(r.session_id),
    definition: str(r.definition),
    turns: num(r.turns),
    open: num(r.open_turns),
    current,
    last,
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
  };
}
