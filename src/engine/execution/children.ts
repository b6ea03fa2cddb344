import { SteadError } from "../../errors.js";
import type { Mutation, RunReads, RunRow, Store, WaitOpen } from "../../store/types.js";
import type { WorkflowDefinition } from "../definitions/definition.js";
import { childRunId } from "../ids.js";
import { encodePayload } from "../payload.js";
import { resolveWaitUnit } from "../runs/waits.js";

/** How a child run ended, as its parent's `child` wait records it. */
export interface ChildResult<O> {
  status: string;
  output?: O;
  error?: { message: string; name: string; code?: string };
}

/** The `child` wait a parent opens at step `id`, and the child run created in the same write. */
export function childStart<I>(runId: string, id: string, def: WorkflowDefinition<I, unknown>, input: I, limit: number): { wait: WaitOpen; newRuns: NonNullable<Mutation["newRuns"]> } {
  const childId = childRunId(runId, id);
  return {
    wait: { name: id, kind: "child", seq: 0, request: JSON.stringify({ child: childId, definition: def.name }) },
    newRuns: [
      {
        id: childId,
        definition: def.name,
        module: def.module,
        fingerprint: def.fingerprint(),
        input: encodePayload(input, `the input of child "${id}"`, limit, { runId, stepId: id }) ?? "null",
        parentId: runId,
        parentStepId: id,
        createdAt: Date.now(),
      },
    ],
  };
}

/**
 * The refusal of a new child whose id a run that is not that child holds already (another parent
 * or none, another step, another definition), or undefined. Hazard: the store takes an existing
 * id as a retry of the same creation, so without this the parent would wait for a run that never
 * reports to it. Such a run predates the refusal of chosen ids with a '.' (`checkChosenRunId`),
 * which leaves no caller able to make one between this read and the parent's write.
 */
export async function foreignChild(store: Pick<Store, "getRun">, newRuns: NonNullable<Mutation["newRuns"]>): Promise<SteadError | undefined> {
  for (const r of newRuns) {
    const held = await store.getRun(r.id);
    if (!held || (held.parentId === (r.parentId ?? null) && held.parentStepId === (r.parentStepId ?? null) && held.definition === r.definition)) continue;
    const parentId = r.parentId ?? "?";
    const stepId = r.parentStepId ?? "?";
    const owner = held.parentId ? `a child of run ${held.parentId}${held.parentStepId ? ` at step "${held.parentStepId}"` : ""}` : "started by a caller, not by this run";
    return new SteadError("STEAD_ID_TAKEN", `run ${parentId} cannot start its child at step "${stepId}": run ${r.id} exists already (${held.definition}, ${owner}) and is not that child`, {
      runId: parentId,
      stepId,
      childId: r.id,
      fix: `fork this run (\`stead fork ${parentId}\`): the fork's children get ids of their own`,
    });
  }
  return undefined;
}

/** The child's output, or its end as a failure of the parent's `ctx.child` call. */
export function childOutcome<O>(runId: string, id: string, r: ChildResult<O>): O {
  if (r.status === "completed") return r.output as O;
  throw new SteadError("STEAD_CHILD_FAILED", `child run ${childRunId(runId, id)} ${r.status}: ${r.error?.message ?? "no reason given"}`, {
    runId,
    stepId: id,
    childStatus: r.status,
    fix: `inspect it with \`stead why ${childRunId(runId, id)}\``,
  });
}

/**
 * The mutations, in a child's final write, that tell its parent (if any) how it ended. The parent's
 * wait is read for its journal position: the answer names where it lands (see WaitResolve.seq).
 */
export async function parentWake(store: Pick<RunReads, "waits">, run: RunRow, result: Record<string, unknown>): Promise<Mutation[]> {
  const { parentId, parentStepId } = run;
  if (!parentId || !parentStepId) return [];
  return resolveParent(store, parentId, parentStepId, run.id, result);
}

/** Mutations that tell a parent waiting on `childId` how it ended (optional: the parent, or its wait, may be gone). */
export async function resolveParent(store: Pick<RunReads, "waits">, parentId: string, parentStepId: string, childId: string, result: Record<string, unknown>): Promise<Mutation[]> {
  const wait = (await store.waits(parentId)).find((w) => w.name === parentStepId);
  if (!wait) return [];
  return resolveWaitUnit(
    parentId,
    wait,
    JSON.stringify(result),
    `run:${childId}`,
    { type: "wait.resolved", data: { wait: parentStepId, kind: "child", child: childId, status: result.status } },
    true,
  );
}
