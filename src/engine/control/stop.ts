import type { Commits, IdempotencyKeys, Mutation, RunReads, RunRow, RunStatus } from "../../store/types.js";
import { TERMINAL_STATUSES } from "../../store/types.js";
import { childRuns } from "../../store/run-sets.js";
import { resolveParent } from "../execution/index.js";
import { onceByKey, type Replayable } from "./idempotency.js";
import { commitOne, dataOf, keyed, lastEvent, raced, requireRun, stateError, type ControlCall } from "./common.js";
import type { CancelResult, PauseResult } from "../../client/api-types.js";

export type { CancelResult, PauseResult } from "../../client/api-types.js";

/** Stopping runs: pause (parks it, resumable) and cancel (ends it and its children, resumable too). */

export async function pause(call: ControlCall<Commits & IdempotencyKeys & RunReads>, runId: string): Promise<Replayable<PauseResult>> {
  const { store, by, key } = call;
  return onceByKey<PauseResult>(store, keyed(key, "pause", runId, {}, by), async (keyWrite) => {
    const run = await requireRun(store, runId);
    if (run.status === "paused") return { runId, state: "paused", already: true };
    if (run.status === "running" && run.pauseRequested) return { runId, state: "pause-requested", already: true };
    if (run.status === "pending" || run.status === "waiting") {
      const outcome: PauseResult = { runId, state: "paused" };
      const r = await commitOne(store, [
        { runId, expect: { status: [run.status] }, run: { status: "paused" }, events: [{ type: "run.paused", data: { from: run.status, by } }], ...(keyWrite ? { idempotency: keyWrite(outcome) } : {}) },
      ]);
      if (!r.ok) throw raced(runId, r, "pausing");
      return { ...outcome, already: false };
    }
    if (run.status === "running") {
      const outcome: PauseResult = { runId, state: "pause-requested" };
      const r = await commitOne(store, [
        { runId, expect: { status: ["running"] }, run: { pauseRequested: true }, events: [{ type: "run.pause_requested", data: { by } }], ...(keyWrite ? { idempotency: keyWrite(outcome) } : {}) },
      ]);
      if (!r.ok) throw raced(runId, r, "pausing");
      return { ...outcome, already: false };
    }
    throw stateError(run, "pause", `only pending, waiting or running runs can be paused; see \`stead why ${runId}\``);
  });
}

/** Cancels a run and, recursively, its unfinished children, in one transaction. Cancellation deletes no state: `resume` brings the tree back. */
export async function cancel(call: ControlCall<Commits & IdempotencyKeys & RunReads>, runId: string, reason: string | null): Promise<Replayable<CancelResult>> {
  const { store, by, key } = call;
  return onceByKey<CancelResult>(store, keyed(key, "cancel", runId, { reason }, by), async (keyWrite) => {
    const root = await requireRun(store, runId);
    if (root.status === "cancelled") {
      const e = dataOf(await lastEvent(store, runId, "run.cancelled"));
      return { runId, cancelled: [], by: typeof e.by === "string" ? e.by : null, at: root.updatedAt, already: true };
    }
    if (TERMINAL_STATUSES.includes(root.status)) throw stateError(root, "cancel", "it has already ended");
    const tree: RunRow[] = [root];
    for (let i = 0; i < tree.length; i++) {
      const r = tree[i];
      if (r) tree.push(...(await childRuns(store, r.id)));
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
        // A running run keeps its lease's end on record: a worker may still be inside a step until
        // its next renewal fails, so `resume` waits that lease out before another worker may claim.
        run: { status: "cancelled", releaseLease: r.status !== "running", error, pauseRequested: false },
        resolveWaits: waits.map((w) => ({ name: w.name, status: "cancelled" as const, by })),
        events: [{ type: "run.cancelled", data: { reason, by, ...(r.id !== runId ? { via: runId } : {}) } }],
      });
      cancelled.push(r.id);
    }
    if (root.parentId && root.parentStepId) {
      unit.push(...(await resolveParent(store, root.parentId, root.parentStepId, root.id, { status: "cancelled", error: JSON.parse(error) as unknown })));
    }
    const outcome: CancelResult = { runId, cancelled, by, at: Date.now() };
    if (unit[0] && keyWrite) unit[0].idempotency = keyWrite(outcome);
    const r = await commitOne(store, unit);
    if (!r.ok) {
      const now = await requireRun(store, runId);
      if (now.status === "cancelled") return { runId, cancelled: [], by: null, at: now.updatedAt, already: true };
      throw raced(runId, r, "cancelling");
    }
    return { ...outcome, already: false };
  });
}
