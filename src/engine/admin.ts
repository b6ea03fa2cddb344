import { SteadError } from "../errors.js";
import type { HoldRow, Mutation, RunRow, RunStatus, StepWrite, Store, UnitResult } from "../store/types.js";
import { TERMINAL_STATUSES } from "../store/types.js";
import { resolveParent } from "./execution.js";
import { HOLD_CHOICES, OUTCOME_UNKNOWN, type ReleaseChoice } from "./holds.js";
import { idExcerpt, newRunId } from "./ids.js";
import { encodePayload } from "./payload.js";
import { resolveWaitUnit } from "./waits.js";
import { toolDecisionFields } from "./tool-decisions.js";

/**
 * Operations people (and the CLI) perform on runs. Each reads, decides, then commits one unit whose
 * preconditions (status, open wait, open hold) make it refuse a run that changed in between.
 */

export async function requireRun(store: Store, runId: string): Promise<RunRow> {
  const run = await store.getRun(runId);
  if (!run) {
    throw new SteadError("STEAD_RUN_NOT_FOUND", `no run with id ${idExcerpt(runId)}`, { runId, fix: "list runs with `stead ps`" });
  }
  return run;
}

function raced(runId: string, r: UnitResult, what: string): SteadError {
  return new SteadError("STEAD_INVALID_STATE", `run ${runId} changed while ${what} (${r.ok ? "ok" : r.reason}); nothing was written`, {
    runId,
    fix: "look at it again with `stead why " + runId + "` and retry",
  });
}

export interface Decision {
  by?: string | null;
  reason?: string | null;
  /** Tool approvals only: replacement arguments, validated against the tool's input schema (an invalid edit is refused, the wait stays open). */
  input?: unknown;
  /** Tool approvals only: "run" approves every later call of the same tool in this run. Default "once". */
  scope?: "once" | "run";
}

async function openWaitOf(store: Store, runId: string, name: string, kind: "approval" | "signal") {
  const run = await requireRun(store, runId);
  const waits = await store.waits(runId);
  const w = waits.find((x) => x.name === name);
  const open = waits.filter((x) => x.status === "open");
  const list = open.length ? open.map((x) => `${x.kind} "${x.name}"`).join(", ") : "nothing";
  if (!w || w.status !== "open" || w.kind !== kind) {
    throw new SteadError(
      "STEAD_WAIT_NOT_FOUND",
      `run ${runId} (${run.status}) is not waiting for ${kind} "${name}"; it waits for ${list}`,
      { runId, wait: name, fix: `see what it waits for with \`stead why ${runId}\`` },
    );
  }
  return { run, wait: w };
}

export async function decide(store: Store, runId: string, name: string, approved: boolean, d: Decision = {}, limit = Infinity): Promise<void> {
  const { wait } = await openWaitOf(store, runId, name, "approval");
  const at = Date.now();
  const tool = toolDecisionFields(runId, name, wait.request, approved, d);
  const result = encodePayload({ approved, by: d.by ?? null, reason: d.reason ?? null, at, ...tool }, `the decision on "${name}"`, limit, { runId, stepId: name }) ?? "null";
  const r = await commitOne(
    store,
    resolveWaitUnit(runId, name, result, d.by ?? null, {
      type: approved ? "approval.approved" : "approval.denied",
      data: { wait: name, by: d.by ?? null, reason: d.reason ?? null, ...(tool.input !== undefined ? { edited: true } : {}), ...(tool.scope ? { scope: tool.scope } : {}) },
    }),
  );
  if (!r.ok) throw raced(runId, r, `deciding "${name}"`);
}

export async function signal(store: Store, runId: string, name: string, payload: unknown, limit: number, by: string | null = null): Promise<void> {
  await openWaitOf(store, runId, name, "signal");
  const result = encodePayload(payload, `signal "${name}"`, limit, { runId, stepId: name }) ?? "null";
  const r = await commitOne(store, resolveWaitUnit(runId, name, result, by, { type: "signal.received", data: { wait: name, by } }));
  if (!r.ok) throw raced(runId, r, `delivering signal "${name}"`);
}

async function commitOne(store: Store, unit: Mutation[]): Promise<UnitResult> {
  const [r] = await store.commit([unit]);
  return r ?? { ok: false, reason: "missing", runId: unit[0]?.runId ?? "" };
}

function stateError(run: RunRow, verb: string, fix: string): SteadError {
  return new SteadError("STEAD_INVALID_STATE", `cannot ${verb} run ${run.id}: it is ${run.status}`, { runId: run.id, status: run.status, fix });
}

export async function pause(store: Store, runId: string): Promise<"paused" | "pause-requested"> {
  const run = await requireRun(store, runId);
  if (run.status === "pending" || run.status === "waiting") {
    const r = await commitOne(store, [
      { runId, expect: { status: [run.status] }, run: { status: "paused" }, events: [{ type: "run.paused", data: { from: run.status } }] },
    ]);
    if (!r.ok) throw raced(runId, r, "pausing");
    return "paused";
  }
  if (run.status === "running") {
    const r = await commitOne(store, [
      { runId, expect: { status: ["running"] }, run: { pauseRequested: true }, events: [{ type: "run.pause_requested", data: {} }] },
    ]);
    if (!r.ok) throw raced(runId, r, "pausing");
    return "pause-requested";
  }
  throw stateError(run, "pause", `only pending, waiting or running runs can be paused; see \`stead why ${runId}\``);
}

export async function resume(store: Store, runId: string): Promise<void> {
  const run = await requireRun(store, runId);
  if (run.status === "paused") {
    // Back to pending even if a wait is still open: replay reaches it and parks again.
    const r = await commitOne(store, [{ runId, expect: { status: ["paused"] }, run: { status: "pending", pauseRequested: false }, events: [{ type: "run.resumed", data: {} }] }]);
    if (!r.ok) throw raced(runId, r, "resuming");
    return;
  }
  if (run.status === "running" && run.pauseRequested) {
    const r = await commitOne(store, [{ runId, expect: { status: ["running"] }, run: { pauseRequested: false }, events: [{ type: "run.resumed", data: {} }] }]);
    if (!r.ok) throw raced(runId, r, "resuming");
    return;
  }
  if (run.status === "held") {
    throw stateError(run, "resume", `it is on hold: release it with \`stead release ${runId} <hold> --choice ...\` (see \`stead why ${runId}\`)`);
  }
  throw stateError(run, "resume", "only paused runs can be resumed");
}

/** Cancels a run and, recursively, its unfinished children, in one transaction. */
export async function cancel(store: Store, runId: string, reason: string | null, by: string | null): Promise<string[]> {
  const root = await requireRun(store, runId);
  if (TERMINAL_STATUSES.includes(root.status)) throw stateError(root, "cancel", "it has already ended");
  const tree: RunRow[] = [root];
  for (let i = 0; i < tree.length; i++) {
    const r = tree[i];
    if (r) tree.push(...(await store.listRuns({ parentId: r.id, limit: 100_000 })));
  }
  const live = (s: RunStatus) => !TERMINAL_STATUSES.includes(s);
  const error = JSON.stringify({ name: "Cancelled", code: "STEAD_CANCELLED", message: reason ? `cancelled: ${reason}` : "cancelled" });
  const unit: Mutation[] = [];
  const cancelled: string[] = [];
  for (const r of tree) {
    if (!live(r.status)) continue;
    const waits = (await store.waits(r.id)).filter((w) => w.status === "open");
    unit.push({
      runId: r.id,
      optional: r.id !== runId,
      expect: { status: ["pending", "running", "waiting", "held", "paused"] },
      run: { status: "cancelled", releaseLease: true, error, pauseRequested: false },
      resolveWaits: waits.map((w) => ({ name: w.name, status: "cancelled" as const, by })),
      events: [{ type: "run.cancelled", data: { reason, by, ...(r.id !== runId ? { via: runId } : {}) } }],
    });
    cancelled.push(r.id);
  }
  if (root.parentId && root.parentStepId) {
    unit.push(...resolveParent(root.parentId, root.parentStepId, root.id, { status: "cancelled", error: JSON.parse(error) as unknown }));
  }
  const r = await commitOne(store, unit);
  if (!r.ok) throw raced(runId, r, "cancelling");
  return cancelled;
}

export async function findOpenHold(store: Store, runId: string, ref: string | undefined): Promise<HoldRow> {
  const run = await requireRun(store, runId);
  const open = await store.holds({ runId, status: "open" });
  const describe = open.length ? open.map((h) => `${h.kind} (id ${h.id})`).join(", ") : "none";
  const hold = ref === undefined ? (open.length === 1 ? open[0] : undefined) : open.find((h) => String(h.id) === ref || h.kind === ref);
  if (!hold) {
    throw new SteadError(
      "STEAD_HOLD_NOT_FOUND",
      ref === undefined ? `run ${runId} (${run.status}) has no single open hold; open holds: ${describe}` : `run ${runId} has no open hold "${ref}"; open holds: ${describe}`,
      { runId, hold: ref ?? null, fix: `list holds with \`stead holds\`, or see \`stead why ${runId}\`` },
    );
  }
  return hold;
}

export interface ReleaseOptions {
  choice: ReleaseChoice;
  /** With choice "result": the step's outcome. */
  result?: unknown;
  by?: string | null;
}

export async function release(store: Store, runId: string, ref: string | undefined, o: ReleaseOptions, limit: number): Promise<HoldRow> {
  const hold = await findOpenHold(store, runId, ref);
  const allowed = HOLD_CHOICES[hold.kind].map((c) => c.choice);
  if (!allowed.includes(o.choice)) {
    throw new SteadError("STEAD_BAD_INPUT", `choice "${o.choice}" does not apply to a ${hold.kind} hold`, {
      runId,
      fix: `choose one of: ${allowed.join(", ")}`,
    });
  }
  if (o.choice === "result" && o.result === undefined) {
    throw new SteadError("STEAD_BAD_INPUT", "choice \"result\" needs the step's outcome", { runId, fix: "pass it as JSON with --result '{...}'" });
  }
  const steps: StepWrite[] = [];
  if (hold.kind === "ambiguous_effect") {
    const entry = (await store.journal(runId)).find((s) => s.seq === hold.seq);
    if (!entry || entry.status !== "intent") {
      throw new SteadError("STEAD_INVALID_STATE", `the journal of run ${runId} has no open intent at position ${hold.seq ?? "?"}`, {
        runId,
        fix: "the hold is stale; cancel or fork the run",
      });
    }
    const base = { seq: entry.seq, stepId: entry.stepId, kind: entry.kind, attempt: entry.attempt, startedAt: entry.startedAt, completedAt: Date.now() };
    if (o.choice === "retry") steps.push({ ...base, status: "retry", completedAt: null });
    if (o.choice === "skip") steps.push({ ...base, status: "failed", error: JSON.stringify(OUTCOME_UNKNOWN) });
    if (o.choice === "result") {
      steps.push({ ...base, status: "completed", output: encodePayload(o.result, `the result supplied for step "${entry.stepId}"`, limit, { runId, stepId: entry.stepId }) });
    }
  }
  const r = await commitOne(store, [
    {
      runId,
      expect: { status: ["held"], openHold: hold.id },
      releaseHolds: [{ id: hold.id, choice: o.choice, by: o.by ?? null }],
      steps,
      run: {
        status: "pending",
        lostClaims: 0,
        ...(o.choice === "accept-change" ? { fingerprint: null } : {}),
      },
      events: [{ type: "hold.released", data: { hold: hold.kind, id: hold.id, choice: o.choice, by: o.by ?? null, step: hold.stepId } }],
    },
  ]);
  if (!r.ok) throw raced(runId, r, `releasing hold ${hold.id}`);
  return hold;
}

/** A new run of the same definition and input that reuses the source's journal up to a step. */
export async function fork(store: Store, runId: string, at: string | undefined, newId?: string): Promise<{ id: string; reused: number }> {
  const src = await requireRun(store, runId);
  const journal = await store.journal(runId);
  const final = (s: { status: string }) => s.status === "completed" || s.status === "failed";
  let cut = journal.length;
  const firstOpen = journal.findIndex((s) => !final(s));
  if (firstOpen >= 0) cut = firstOpen;
  if (at !== undefined) {
    const i = journal.findIndex((s) => s.stepId === at);
    if (i < 0) {
      throw new SteadError("STEAD_STEP_NOT_FOUND", `run ${runId} has no step "${at}" in its journal`, {
        runId,
        stepId: at,
        fix: `list its steps with \`stead status ${runId}\``,
      });
    }
    if (i >= cut) {
      throw new SteadError("STEAD_BAD_INPUT", `step "${at}" of run ${runId} has no final outcome, so it cannot be reused`, {
        runId,
        stepId: at,
        fix: "fork at an earlier step, or without --at",
      });
    }
    cut = i + 1;
  }
  const id = newId ?? newRunId();
  const now = Date.now();
  await store.createRun(
    {
      id,
      definition: src.definition,
      module: src.module,
      fingerprint: null,
      input: src.input,
      createdAt: now,
      journal: journal.slice(0, cut).map((s) => ({
        seq: s.seq,
        stepId: s.stepId,
        kind: s.kind,
        status: s.status,
        attempt: s.attempt,
        output: s.output,
        error: s.error,
        startedAt: s.startedAt,
        completedAt: s.completedAt,
        checkpoint: s.checkpoint,
      })),
    },
    [{ type: "run.created", data: { definition: src.definition, forkedFrom: runId, at: at ?? null, reused: cut } }],
  );
  await store.commit([[{ runId, events: [{ type: "run.forked", data: { fork: id, at: at ?? null, reused: cut } }] }]]);
  return { id, reused: cut };
}
