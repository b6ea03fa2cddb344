import { SteadError } from "../../errors.js";
import type { Commits, IdempotencyKeys, RunReads, StepRow } from "../../store/types.js";
import { newRunId } from "../ids.js";
import { onceByKey, type Replayable } from "./idempotency.js";
import { keyed, requireRun, type ControlCall } from "./common.js";
import type { ForkResult } from "../../client/api-types.js";

export type { ForkResult } from "../../client/api-types.js";

/** How many leading journal entries a fork reuses: every final one, or up to and including `at`. */
function cutAt(runId: string, journal: StepRow[], at: string | undefined): number {
  const final = (s: { status: string }) => s.status === "completed" || s.status === "failed";
  const firstOpen = journal.findIndex((s) => !final(s));
  const cut = firstOpen >= 0 ? firstOpen : journal.length;
  if (at === undefined) return cut;
  const i = journal.findIndex((s) => s.stepId === at);
  if (i < 0) {
    throw new SteadError("STEAD_STEP_NOT_FOUND", `run ${runId} has no step "${at}" in its journal`, {
      runId,
      stepId: at,
      fix: `list its steps with \`stead status ${runId}\``,
    });
  }
  if (i >= cut) {
    throw new SteadError("STEAD_BAD_OPTION", `step "${at}" of run ${runId} has no final outcome, so it cannot be reused`, {
      runId,
      stepId: at,
      fix: "fork at an earlier step, or without --at",
    });
  }
  return i + 1;
}

/** A new run of the same definition and input that reuses the source's journal up to a step. */
export async function fork(call: ControlCall<Commits & IdempotencyKeys & RunReads>, runId: string, at: string | undefined, newId?: string): Promise<Replayable<ForkResult>> {
  const { store, by, key } = call;
  return onceByKey<ForkResult>(store, keyed(key, "fork", runId, { at: at ?? null, id: newId ?? null }, by), async (keyWrite) => {
    const src = await requireRun(store, runId);
    const journal = await store.journal(runId);
    const cut = cutAt(runId, journal, at);
    const outcome: ForkResult = { id: newId ?? newRunId(), reused: cut };
    await store.createRun(
      {
        id: outcome.id,
        definition: src.definition,
        module: src.module,
        fingerprint: null,
        input: src.input,
        createdAt: Date.now(),
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
      [{ type: "run.created", data: { definition: src.definition, forkedFrom: runId, at: at ?? null, reused: cut, by } }],
      keyWrite?.(outcome),
    );
    await store.commit([[{ runId, events: [{ type: "run.forked", data: { fork: outcome.id, at: at ?? null, reused: cut, by } }] }]]);
    return { ...outcome, already: false };
  });
}
