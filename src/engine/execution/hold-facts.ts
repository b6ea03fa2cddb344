import { errorMessage } from "../../errors.js";
import type { Mutation, RunRow, StepKind, StepRow } from "../../store/types.js";
import type { HoldFacts } from "./lifecycle.js";

/**
 * Every hold an execution can put on its run, with the facts it records (a hold's `details`,
 * read by `stead why` and by release), and the one write that puts it.
 */

export function crashLoop(run: RunRow): HoldFacts {
  return {
    hold: "process_failed",
    reason: `${run.lostClaims} claims in a row ended by lease loss with no step completing (a crash loop)`,
    facts: { lostClaims: run.lostClaims },
    stepId: null,
    seq: null,
  };
}

export function definitionChanged(definition: string, recorded: string, current: string, module: string | null): HoldFacts {
  return {
    hold: "definition_changed",
    reason: `the code of ${definition} changed since this run started (recorded ${recorded}, loaded ${current})`,
    facts: { recorded, current, module },
    stepId: null,
    seq: null,
  };
}

export function workspaceGap(root: string, e: unknown): HoldFacts {
  return {
    hold: "recovery_gap",
    reason: `the workspace ${root} could not be brought to the run's last completed step: ${errorMessage(e)}`,
    facts: { workspace: root, error: errorMessage(e) },
    stepId: null,
    seq: null,
  };
}

/** The code asked for `stepId` (of `kinds`) where the journal has `entry`. */
export function divergence(seq: number, entry: StepRow, stepId: string, kinds: readonly StepKind[]): HoldFacts {
  return {
    hold: "nondeterminism",
    reason: `replay diverged at journal position ${seq}: the journal has ${entry.kind} "${entry.stepId}", the code asked for ${kinds[0] ?? "step"} "${stepId}"`,
    facts: { position: seq, expected: entry.stepId, expectedKind: entry.kind, requested: stepId, requestedKind: kinds[0] ?? null },
    stepId: entry.stepId,
    seq,
  };
}

/** The code finished at `position` but the journal goes on to `maxSeq` (holding `left` there). */
export function unreplayed(position: number, maxSeq: number, left: StepRow | undefined): HoldFacts {
  return {
    hold: "nondeterminism",
    reason: `the code finished at journal position ${position}, but the journal has "${left?.stepId ?? "?"}" at position ${maxSeq}`,
    facts: { expected: left?.stepId ?? null, requested: null, position },
    stepId: left?.stepId ?? null,
    seq: maxSeq,
  };
}

/** An effect's intent was found with no outcome, and neither `retry: "always"` nor reconcile settles it. */
export function ambiguousEffect(runId: string, stepId: string, seq: number, entry: StepRow, why: string): HoldFacts {
  return {
    hold: "ambiguous_effect",
    reason: `effect step "${stepId}" may or may not have happened: ${why}`,
    facts: { step: stepId, attempt: entry.attempt, idempotencyKey: `${runId}:${stepId}`, intentAt: entry.startedAt },
    stepId,
    seq,
  };
}

export function holdMutation(h: HoldFacts): Omit<Mutation, "runId" | "expect"> {
  return {
    run: { status: "held", releaseLease: true },
    holds: [{ kind: h.hold, stepId: h.stepId, seq: h.seq, reason: h.reason, details: JSON.stringify(h.facts) }],
    events: [{ type: "run.held", data: { hold: h.hold, reason: h.reason, step: h.stepId } }],
  };
}
