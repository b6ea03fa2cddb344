import type { HoldKind } from "../../store/types.js";
import type { ReleaseChoice } from "../../client/api-types.js";

export type { ReleaseChoice } from "../../client/api-types.js";

export interface HoldChoice {
  choice: ReleaseChoice;
  /** What happens when a person takes this way out. */
  effect: string;
}

/** The ways out of each hold. `stead release <run> <hold> --choice <choice>` takes one. */
export const HOLD_CHOICES: Record<HoldKind, readonly HoldChoice[]> = {
  ambiguous_effect: [
    { choice: "retry", effect: "run the effect again as a new attempt (same idempotency key)" },
    { choice: "skip", effect: 'record the step as "interrupted: outcome unknown" and go on (the step throws STEAD_OUTCOME_UNKNOWN)' },
    { choice: "result", effect: "record the result you supply as the step's outcome (you checked what happened)" },
  ],
  nondeterminism: [{ choice: "retry", effect: "replay again with the code as now deployed (after fixing the divergence)" }],
  definition_changed: [
    { choice: "retry", effect: "resume under the code as now deployed (after reverting it to the recorded fingerprint)" },
    { choice: "accept-change", effect: "accept the changed code for this run and resume it" },
  ],
  process_failed: [{ choice: "retry", effect: "claim the run again (after fixing what killed the process)" }],
  storage: [{ choice: "retry", effect: "resume the run once storage is healthy" }],
  recovery_gap: [{ choice: "retry", effect: "resume the run, accepting the gap" }],
};

/**
 * The error record of a step's *error outcome* (EngineStepOptions.errorOutcome): a completed step
 * with an error, the caller's to handle. Journals written before it hold a tool's error as the
 * `$steadToolError` marker in the output instead (read by agent/tool-call.ts for ever).
 */
export const ERROR_OUTCOME = { name: "ErrorOutcome", code: "STEAD_ERROR_OUTCOME" } as const;

export const OUTCOME_UNKNOWN = {
  name: "OutcomeUnknown",
  code: "STEAD_OUTCOME_UNKNOWN",
  message: "interrupted: outcome unknown",
};

/** When the store became full, as a `storage` hold's details record it. */
export function storageSince(details: string): number | undefined {
  try {
    const since = (JSON.parse(details) as { since?: unknown }).since;
    return typeof since === "number" ? since : undefined;
  } catch {
    return undefined;
  }
}
