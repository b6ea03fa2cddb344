import { SteadError } from "../../errors.js";
import type { Mutation, RunRow, WaitOpen } from "../../store/types.js";
import type { WorkflowDefinition } from "../definition.js";
import { childRunId } from "../ids.js";
import { encodePayload } from "../payload.js";
import { resolveWaitUnit } from "../waits.js";

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

/** The mutations, in a child's final write, that tell its parent (if any) how it ended. */
export function parentWake(run: RunRow, result: Record<string, unknown>): Mutation[] {
  const { parentId, parentStepId } = run;
  if (!parentId || !parentStepId) return [];
  return resolveParent(parentId, parentStepId, run.id, result);
}

/** Mutations that tell a parent waiting on `childId` how it ended (optional: the parent may be gone). */
export function resolveParent(parentId: string, parentStepId: string, childId: string, result: Record<string, unknown>): Mutation[] {
  return resolveWaitUnit(
    parentId,
    parentStepId,
    JSON.stringify(result),
    `run:${childId}`,
    { type: "wait.resolved", data: { wait: parentStepId, kind: "child", child: childId, status: result.status } },
    true,
  );
}
