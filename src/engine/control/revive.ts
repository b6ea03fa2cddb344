import { SteadError } from "../../errors.js";
import type { Commits, IdempotencyKeys, Mutation, RunReads, RunRow, SnapshotsAndBlobs, StepRow } from "../../store/types.js";
import { TERMINAL_STATUSES } from "../../store/types.js";
import { childRuns, sessionTurns } from "../../store/run-sets.js";
import { onceByKey, type Replayable } from "./idempotency.js";
import { decodeError } from "../payload.js";
import { commitOne, dataOf, keyed, lastEvent, raced, requireRun, stateError, type ControlCall } from "./common.js";
import type { ResumeResult, RetryResult } from "../../client/api-types.js";

export type { ResumeResult, RetryResult } from "../../client/api-types.js";

/**
 * Bringing runs back: a paused run resumed; a cancelled run resumed from its last completed step
 * (with the children its cancellation ended); a failed run's failed step given a new attempt.
 * A failed or cancelled run nobody brings back stays ended for every other purpose.
 */

export async function resume(call: ControlCall<Commits & IdempotencyKeys & RunReads & SnapshotsAndBlobs>, runId: string): Promise<Replayable<ResumeResult>> {
  const { store, by, key } = call;
  return onceByKey<ResumeResult>(store, keyed(key, "resume", runId, {}, by), async (keyWrite) => {
    const run = await requireRun(store, runId);
    const withKey = (m: Mutation, outcome: ResumeResult): Mutation => (keyWrite ? { ...m, idempotency: keyWrite(outcome) } : m);
    if (run.status === "paused") {
      const outcome: ResumeResult = { runId, from: "paused", resumed: [runId] };
      // Back to pending even if a wait is still open: replay reaches it and parks again.
      const r = await commitOne(store, [withKey({ runId, expect: { status: ["paused"] }, run: { status: "pending", pauseRequested: false }, events: [{ type: "run.resumed", data: { from: "paused", by } }] }, outcome)]);
      if (!r.ok) throw raced(runId, r, "resuming");
      return { ...outcome, already: false };
    }
    if (run.status === "running" && run.pauseRequested) {
      const outcome: ResumeResult = { runId, from: "pause-requested", resumed: [runId] };
      const r = await commitOne(store, [withKey({ runId, expect: { status: ["running"] }, run: { pauseRequested: false }, events: [{ type: "run.resumed", data: { from: "pause-requested", by } }] }, outcome)]);
      if (!r.ok) throw raced(runId, r, "resuming");
      return { ...outcome, already: false };
    }
    if (run.status === "cancelled") return resumeCancelled(store, run, by, keyWrite);
    if (run.status === "held") throw await heldError(store, run, "resume");
    // Resumed already (a repeat of the same command): say so, with who did it.
    const last = dataOf(await lastEvent(store, runId, "run.resumed"));
    if (!TERMINAL_STATUSES.includes(run.status) && (last.from === "paused" || last.from === "pause-requested" || last.from === "cancelled")) {
      return { runId, from: last.from, resumed: [], already: true };
    }
    throw stateError(run, "resume", "only paused or cancelled runs can be resumed (a failed one is retried: `stead retry <run>`)");
  });
}

/**
 * The refusal of a command that needs a held run to continue. A run held because its code changed
 * or diverged from its journal gets that hold's own code, so a caller can act on it without
 * reading the hold (accept the change or fork; fix the divergence or fork); other holds are a state.
 */
async function heldError(store: Commits & IdempotencyKeys & RunReads & SnapshotsAndBlobs, run: RunRow, verb: string): Promise<SteadError> {
  const open = await store.holds({ runId: run.id, status: "open" });
  const hold = open.find((h) => h.kind === "definition_changed") ?? open.find((h) => h.kind === "nondeterminism");
  if (hold?.kind === "definition_changed") {
    return new SteadError("STEAD_DEFINITION_CHANGED", `cannot ${verb} run ${run.id}: it is held because the code of ${run.definition} changed since it started (hold #${hold.id}: ${hold.reason})`, {
      runId: run.id,
      hold: hold.id,
      fix: `accept the change (stead resume ${run.id} --accept-change), revert the code and release the hold (stead release ${run.id} definition_changed --choice retry), or fork the run (stead fork ${run.id})`,
    });
  }
  if (hold?.kind === "nondeterminism") {
    return new SteadError("STEAD_NONDETERMINISM", `cannot ${verb} run ${run.id}: it is held because replay diverged from its journal (hold #${hold.id}: ${hold.reason})`, {
      runId: run.id,
      hold: hold.id,
      ...(hold.stepId ? { stepId: hold.stepId } : {}),
      fix: `fix the divergence and release the hold (stead release ${run.id} nondeterminism --choice retry), or fork the run (stead fork ${run.id})`,
    });
  }
  return stateError(run, verb, `it is on hold: release it with \`stead release ${run.id} <hold> --choice ...\` (see \`stead why ${run.id}\`)`);
}

/** The runs a cancellation of `root` ended, by the `via` it recorded on each. */
async function cancelledWith(store: Commits & IdempotencyKeys & RunReads & SnapshotsAndBlobs, root: RunRow): Promise<RunRow[]> {
  const tree: RunRow[] = [root];
  for (let i = 0; i < tree.length; i++) {
    const parent = tree[i];
    if (!parent) continue;
    for (const child of await childRuns(store, parent.id)) {
      if (child.status !== "cancelled") continue;
      const e = dataOf(await lastEvent(store, child.id, "run.cancelled"));
      if (e.via === root.id) tree.push(child);
    }
  }
  return tree;
}

/** Refuses to bring back a child whose parent has gone on without it, or a session turn a later turn has run after. */
async function mayComeBack(store: Commits & IdempotencyKeys & RunReads & SnapshotsAndBlobs, run: RunRow, verb: string): Promise<void> {
  if (run.parentId && run.parentStepId) {
    const parent = await store.getRun(run.parentId);
    const wait = (await store.waits(run.parentId)).find((w) => w.name === run.parentStepId);
    if (parent && wait?.status === "resolved") {
      throw new SteadError("STEAD_INVALID_STATE", `cannot ${verb} run ${run.id}: its parent ${parent.id} was told how it ended and has moved on (it is ${parent.status})`, {
        runId: run.id,
        fix: `run it again as a new run instead: stead fork ${run.id}`,
      });
    }
    if (parent && wait?.status === "cancelled") {
      throw new SteadError("STEAD_INVALID_STATE", `cannot ${verb} run ${run.id}: its parent ${parent.id} was cancelled with it`, {
        runId: run.id,
        fix: `resume the parent: stead resume ${parent.id} (the children cancelled with it resume too)`,
      });
    }
  }
  if (run.sessionId && run.turn !== null) {
    const later = (await sessionTurns(store, run.sessionId)).find((t) => t.turn !== null && t.turn > (run.turn ?? 0) && t.fence > 0);
    if (later) {
      throw new SteadError("STEAD_INVALID_STATE", `cannot ${verb} run ${run.id}: turn ${run.turn} of session ${run.sessionId} was followed by turn ${later.turn ?? "?"}, which has run since`, {
        runId: run.id,
        fix: `send the input again as a new turn: stead send ${run.sessionId} "<text>"`,
      });
    }
  }
}

/** The longest a resume waits for a worker cancelled mid-step to let go; past it, it is refused. */
const LEASE_WAIT_MAX_MS = 5 * 60 * 1000;

/**
 * Hazard: a run cancelled while a worker executed it may still be inside a step in that worker
 * until its next renewal fails. Made runnable at once, another worker could start the same step
 * beside it. So a resume waits until every lease the cancellation left on record has ended.
 */
async function leasesLetGo(store: Commits & IdempotencyKeys & RunReads & SnapshotsAndBlobs, tree: RunRow[]): Promise<void> {
  const until = Math.max(0, ...tree.map((r) => (r.leaseOwner !== null && r.leaseExpiresAt !== null ? r.leaseExpiresAt : 0)));
  if (until === 0) return;
  const wait = until - (await store.storeTime());
  if (wait <= 0) return;
  if (wait > LEASE_WAIT_MAX_MS) {
    throw new SteadError("STEAD_INVALID_STATE", `cannot resume run ${tree[0]?.id ?? "?"} yet: a worker that was running it when it was cancelled holds a lease until ${new Date(until).toISOString()}`, {
      runId: tree[0]?.id,
      fix: "resume it after then, when that worker has surely let go",
    });
  }
  await new Promise((r) => setTimeout(r, wait + 10));
}

async function resumeCancelled(store: Commits & IdempotencyKeys & RunReads & SnapshotsAndBlobs, root: RunRow, by: string | null, keyWrite: ((r: ResumeResult) => Mutation["idempotency"]) | undefined): Promise<Replayable<ResumeResult>> {
  await mayComeBack(store, root, "resume");
  const tree = await cancelledWith(store, root);
  await leasesLetGo(store, tree);
  const inTree = new Set(tree.map((r) => r.id));
  const unit: Mutation[] = [];
  for (const r of tree) {
    const waits = (await store.waits(r.id)).filter((w) => w.status === "cancelled");
    const reopen: string[] = [];
    const resolve: NonNullable<Mutation["resolveWaits"]> = [];
    for (const w of waits) {
      // A child that ended on its own (not in this tree) answers its wait now: nothing would wake it.
      const child = w.kind === "child" ? childOf(w.request) : undefined;
      const ended = child && !inTree.has(child) ? await store.getRun(child) : undefined;
      if (ended && TERMINAL_STATUSES.includes(ended.status)) {
        resolve.push({ name: w.name, seq: w.seq, status: "resolved", result: JSON.stringify(childResult(ended)), by: "stead" });
      } else reopen.push(w.name);
    }
    const held = (await store.holds({ runId: r.id, status: "open" })).length > 0;
    unit.push({
      runId: r.id,
      expect: { status: ["cancelled"] },
      run: { status: held ? "held" : "pending", error: null, lostClaims: 0, releaseLease: true },
      ...(reopen.length ? { reopenWaits: reopen } : {}),
      events: [{ type: "run.resumed", data: { from: "cancelled", by, ...(r.id !== root.id ? { via: root.id } : {}) } }],
    });
    // Reopened first, then answered: resolving needs an open wait.
    if (resolve.length) unit.push({ runId: r.id, reopenWaits: resolve.map((x) => x.name), resolveWaits: resolve });
  }
  const outcome: ResumeResult = { runId: root.id, from: "cancelled", resumed: tree.map((r) => r.id) };
  if (unit[0] && keyWrite) unit[0].idempotency = keyWrite(outcome);
  const r = await commitOne(store, unit);
  if (!r.ok) throw raced(root.id, r, "resuming");
  return { ...outcome, already: false };
}

function childOf(request: string | null): string | undefined {
  try {
    const c = (JSON.parse(request ?? "null") as { child?: unknown } | null)?.child;
    return typeof c === "string" ? c : undefined;
  } catch {
    return undefined;
  }
}

function childResult(child: RunRow): Record<string, unknown> {
  if (child.status === "completed") return { status: "completed", output: child.output === null ? undefined : (JSON.parse(child.output) as unknown) };
  return { status: child.status, error: decodeError(child.error) };
}

const BOOKKEEPING = new Set(["now", "random"]);

/** The failed step a failed run ended with: the one its error names, else the last failed one. */
function failedStep(run: RunRow, journal: StepRow[]): StepRow | undefined {
  const named = decodeError(run.error).stepId;
  const failed = journal.filter((s) => s.status === "failed" && !BOOKKEEPING.has(s.kind));
  return failed.find((s) => s.stepId === named) ?? failed[failed.length - 1];
}

/** Gives a failed run's failed step a new attempt (after fixing what made it fail), with nothing before it run again. */
export async function retry(call: ControlCall<Commits & IdempotencyKeys & RunReads & SnapshotsAndBlobs>, runId: string): Promise<Replayable<RetryResult>> {
  const { store, by, key } = call;
  return onceByKey<RetryResult>(store, keyed(key, "retry", runId, {}, by), async (keyWrite) => {
    const run = await requireRun(store, runId);
    if (run.status !== "failed") {
      const last = dataOf(await lastEvent(store, runId, "run.retried"));
      if (!TERMINAL_STATUSES.includes(run.status) && "attempt" in last) return { runId, stepId: typeof last.step === "string" ? last.step : null, attempt: typeof last.attempt === "number" ? last.attempt : null, already: true };
      if (run.status === "held") throw await heldError(store, run, "retry");
      throw stateError(run, "retry", run.status === "cancelled" ? `resume a cancelled run instead: stead resume ${runId}` : "only failed runs are retried");
    }
    await mayComeBack(store, run, "retry");
    const journal = await store.journal(runId);
    const step = failedStep(run, journal);
    const after = step ? journal.filter((s) => s.seq > step.seq) : [];
    const ran = after.find((s) => !BOOKKEEPING.has(s.kind));
    if (step && ran) {
      throw new SteadError("STEAD_INVALID_STATE", `cannot retry run ${runId}: its failed step "${step.stepId}" was followed by "${ran.stepId}", which ran after the failure`, {
        runId,
        stepId: step.stepId,
        fix: `fork the run at the step before it: stead fork ${runId} --at <step>`,
      });
    }
    const outcome: RetryResult = { runId, stepId: step?.stepId ?? null, attempt: step ? step.attempt + 1 : null };
    const r = await commitOne(store, [
      {
        runId,
        expect: { status: ["failed"] },
        run: { status: "pending", error: null, output: null, lostClaims: 0 },
        // A `retry` entry runs again as attempt + 1 on replay; bookkeeping after it is taken afresh.
        ...(step ? { deleteStepsFrom: step.seq + 1, steps: [{ seq: step.seq, stepId: step.stepId, kind: step.kind, status: "retry" as const, attempt: step.attempt, error: step.error, startedAt: step.startedAt, completedAt: null, checkpoint: step.checkpoint }] } : {}),
        events: [{ type: "run.retried", data: { step: outcome.stepId, attempt: outcome.attempt, by } }],
        ...(keyWrite ? { idempotency: keyWrite(outcome) } : {}),
      },
    ]);
    if (!r.ok) throw raced(runId, r, "retrying");
    return { ...outcome, already: false };
  });
}
