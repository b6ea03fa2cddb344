/**
 * SQLite's translation of mutation/plan.ts: one handler per check and per write, run in the plan's
 * order. The caller runs it inside a BEGIN IMMEDIATE transaction (the write lock is held from its
 * start), so the checks' reads and the writes after them are atomic: no claim or answer can slip
 * in between. A refusal throws PreconditionFailed before the mutation writes anything (the caller
 * relies on it to skip savepoints), and the caller's savepoint, if it took one, is rolled back.
 */
import type Database from "better-sqlite3";
import type { EventWrite, IdempotencyWrite, Mutation, NewRun, RunStatus, SnapshotWrite, StepWrite, UnitResult } from "../types.js";
import { CHECKS, WRITES, type CheckName, type WriteName } from "../mutation/plan.js";
import { sessionInNewRuns } from "../sql/sessions.js";
import { indexPredicate } from "../schema/tables.js";
import { wakes } from "../mutation/wakes.js";
import { storedPayload } from "./stored-payload.js";

export class PreconditionFailed extends Error {
  constructor(readonly result: Extract<UnitResult, { ok: false }>) {
    super(`precondition failed: ${result.reason}`);
  }
}

type Raw = Record<string, unknown>;

/** What the handlers need of the store; createRun shares these writes. */
export interface SqliteWrites {
  stmt(sql: string): Database.Statement;
  /** Records a key unless one is recorded and unexpired; false then. */
  recordKey(k: IdempotencyWrite, now: number): boolean;
  upsertSteps(runId: string, steps: readonly StepWrite[]): void;
  upsertSnapshots(runId: string, snapshots: readonly SnapshotWrite[]): void;
  insertRun(run: NewRun): void;
  insertEvents(runId: string, events: readonly EventWrite[] | undefined, at: number): void;
}

/** The run row as the first check read it, before any write of this mutation. */
interface Current {
  status: RunStatus;
  fence: number;
  leaseOwner: unknown;
  lostClaims: number;
  pauseRequested: boolean;
}

/** What an applied mutation tells its transaction. */
export interface Applied {
  pauseRequested: boolean;
  /** It may have made a run claimable (mutation/wakes.ts): workers of this store are woken once the transaction commits. */
  wake: boolean;
}

type CheckHandler = (m: Mutation, cur: Current, now: number) => boolean;
type WriteHandler = (m: Mutation, cur: Current, now: number) => void;

/** The predicate is events_compactable's, so the partial index serves it. */
const DELETE_COMPACTED_SQL = `DELETE FROM events WHERE run_id = ? AND ${indexPredicate("events", "events_compactable")} AND json_extract(data, '$.step') = ? AND json_extract(data, '$.attempt') = ?`;

/** Returns `apply(m, now)`, which gives the run's pause flag after the mutation and whether it may have made a run claimable. */
export function mutationApplier(w: SqliteWrites): (m: Mutation, now: number) => Applied {
  // The run row is read by the "run" check itself, since every later check needs it.
  const checks: Record<Exclude<CheckName, "run">, CheckHandler> = {
    openWait: (m) => (w.stmt("SELECT status FROM waits WHERE run_id = ? AND name = ?").get(m.runId, m.expect?.openWait) as Raw | undefined)?.status === "open",
    openHold: (m) => (w.stmt("SELECT status FROM holds WHERE run_id = ? AND id = ?").get(m.runId, m.expect?.openHold) as Raw | undefined)?.status === "open",
    lease: (m, cur) => {
      const lease = m.expect?.lease;
      return lease !== undefined && cur.fence === lease.fence && cur.leaseOwner === lease.owner && cur.status === "running";
    },
    status: (m, cur) => m.expect?.status?.includes(cur.status) ?? true,
    idempotency: (m, _cur, now) => m.idempotency === undefined || w.recordKey(m.idempotency, now),
  };

  const writes: Record<WriteName, WriteHandler> = {
    run: (m, cur, now) => {
      const sets: string[] = [];
      const params: unknown[] = [];
      const p = m.run ?? {};
      const column = (name: string, value: unknown) => {
        sets.push(`${name} = ?`);
        params.push(value);
      };
      if (p.status !== undefined) column("status", p.status);
      if (p.output !== undefined) column("output", p.output);
      if (p.outputRefs !== undefined) column("output_refs", p.outputRefs);
      if (p.error !== undefined) column("error", p.error);
      if (p.fingerprint !== undefined) column("fingerprint", p.fingerprint);
      // A step commit asks for lostClaims 0, almost always already so: skipping the no-op update
      // saves a page write per step.
      if (p.lostClaims !== undefined && p.lostClaims !== cur.lostClaims) column("lost_claims", p.lostClaims);
      if (p.pauseRequested !== undefined) column("pause_requested", p.pauseRequested ? 1 : 0);
      if (p.releaseLease) sets.push("lease_owner = NULL", "lease_expires_at = NULL");
      if (sets.length === 0) return;
      column("updated_at", now);
      w.stmt(`UPDATE runs SET ${sets.join(", ")} WHERE id = ?`).run(...params, m.runId);
    },
    deleteStepsFrom: (m) => {
      w.stmt("DELETE FROM steps WHERE run_id = ? AND seq >= ?").run(m.runId, m.deleteStepsFrom);
    },
    steps: (m) => w.upsertSteps(m.runId, m.steps ?? []),
    snapshots: (m) => w.upsertSnapshots(m.runId, m.snapshots ?? []),
    waits: (m, _cur, now) => {
      const s = w.stmt(
        `INSERT INTO waits (run_id, name, kind, status, seq, request, request_kind, wake_at, created_at) VALUES (?, ?, ?, 'open', ?, ?, ?, ?, ?)
         ON CONFLICT (run_id, name) DO UPDATE SET kind = excluded.kind, status = 'open', seq = excluded.seq, request = excluded.request,
           request_kind = excluded.request_kind, wake_at = excluded.wake_at, result = NULL, resolved_at = NULL, resolved_by = NULL`,
      );
      for (const x of m.waits ?? []) s.run(m.runId, x.name, x.kind, x.seq, x.request ?? null, x.requestKind ?? null, x.wakeAt ?? null, now);
    },
    reopenWaits: (m) => {
      const s = w.stmt("UPDATE waits SET status = 'open', result = NULL, resolved_at = NULL, resolved_by = NULL WHERE run_id = ? AND name = ? AND status = 'cancelled'");
      for (const name of m.reopenWaits ?? []) s.run(m.runId, name);
    },
    resolveWaits: (m, _cur, now) => {
      const s = w.stmt("UPDATE waits SET status = ?, result = ?, resolved_at = ?, resolved_by = ? WHERE run_id = ? AND name = ? AND status = 'open'");
      const step = w.stmt(
        `UPDATE steps SET status = 'completed', output = ?, completed_at = ?
         WHERE run_id = ? AND seq = (SELECT seq FROM waits WHERE run_id = ? AND name = ?)`,
      );
      for (const x of m.resolveWaits ?? []) {
        const r = s.run(x.status, x.result ?? null, now, x.by ?? null, m.runId, x.name);
        if (r.changes > 0 && x.status === "resolved") step.run(storedPayload(x.result), now, m.runId, m.runId, x.name);
      }
    },
    holds: (m, _cur, now) => {
      const s = w.stmt(`INSERT INTO holds (run_id, kind, step_id, seq, reason, details, status, created_at) VALUES (?, ?, ?, ?, ?, ?, 'open', ?)`);
      for (const h of m.holds ?? []) s.run(m.runId, h.kind, h.stepId ?? null, h.seq ?? null, h.reason, h.details, now);
    },
    releaseHolds: (m, _cur, now) => {
      const s = w.stmt("UPDATE holds SET status = 'released', choice = ?, released_at = ?, released_by = ? WHERE run_id = ? AND id = ? AND status = 'open'");
      for (const h of m.releaseHolds ?? []) s.run(h.choice, now, h.by ?? null, m.runId, h.id);
    },
    newRuns: (m) => {
      for (const r of m.newRuns ?? []) {
        if (r.sessionId != null) throw sessionInNewRuns(r.id);
        if (!w.stmt("SELECT 1 FROM runs WHERE id = ?").get(r.id)) w.insertRun(r);
      }
    },
    events: (m, _cur, now) => w.insertEvents(m.runId, m.events, now),
    deleteEvents: (m) => {
      const d = m.deleteEvents;
      if (d) w.stmt(DELETE_COMPACTED_SQL).run(m.runId, d.step, d.attempt);
    },
  };

  return (m, now) => {
    const row = w.stmt("SELECT status, fence, lease_owner, lost_claims, pause_requested FROM runs WHERE id = ?").get(m.runId) as Raw | undefined;
    const cur: Current | undefined = row && {
      status: String(row.status) as RunStatus,
      fence: Number(row.fence),
      leaseOwner: row.lease_owner,
      lostClaims: Number(row.lost_claims),
      pauseRequested: Number(row.pause_requested) !== 0,
    };
    for (const c of CHECKS) {
      if (!c.applies(m)) continue;
      if (cur && (c.name === "run" || checks[c.name](m, cur, now))) continue;
      throw new PreconditionFailed({ ok: false, reason: c.reason, runId: m.runId, ...(c.reportsStatus && cur ? { status: cur.status } : {}) });
    }
    if (!cur) throw new PreconditionFailed({ ok: false, reason: "missing", runId: m.runId });
    for (const x of WRITES) if (x.applies(m)) writes[x.name](m, cur, now);
    return { pauseRequested: m.run?.pauseRequested ?? cur.pauseRequested, wake: wakes(m) };
  };
}
