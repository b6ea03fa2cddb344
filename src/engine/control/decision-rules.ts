import type { RequestKind } from "../runs/waits.js";

/**
 * A person's decision on an approval, as the engine reads it: approve or deny, who, and why. The
 * engine records these for every approval; anything more a decision carries belongs to the code
 * that opened the approval, and is read by the `DecisionRules` the Stead instance was made with.
 */
export interface Decision extends DecisionFields {
  by?: string | null;
  reason?: string | null;
}

/**
 * The fields a decision carries for the code that opened the approval. Empty here: the layer
 * that reads fields declares them into this interface (the agent layer: `input` and `scope` of a
 * tool approval, in agent/tool-decisions.ts), so the engine keeps one generic shape.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declared into by module augmentation
export interface DecisionFields {}

/** A decision's own fields, read by name (those `DecisionRules.fields` lists, others dropped). */
export type FieldValues = Readonly<Record<string, unknown>>;

/**
 * How decisions are read beyond approve/deny, by the layer whose approvals take fields.
 *
 * Invariants:
 * - `check` runs before anything is written; a refusal (a thrown SteadError) leaves the wait open.
 * - What `check` returns is recorded in the wait's result, next to approved/by/reason/at, and is
 *   what the waiting code reads back; replay reads that record, never these rules.
 * - `same` decides whether a repeat of a recorded decision succeeds (`already`) or is refused.
 */
export interface DecisionRules {
  /** The names of the fields these rules read; the idempotency key's arguments include them. */
  readonly fields: readonly string[];
  check(c: DecisionCheck): { recorded: Record<string, unknown>; event: Record<string, unknown> };
  same(recorded: Record<string, unknown>, fields: FieldValues): boolean;
  /** The recorded decision as a refusal names it ("approved", "denied", "approved with edited arguments"). */
  describe(recorded: Record<string, unknown>): string;
}

export interface DecisionCheck {
  runId: string;
  /** The approval's name. */
  name: string;
  /** The request the approval was opened with, as stored (JSON text, or null). */
  request: string | null;
  /** What the request is (engine/runs/waits.ts requestKindOf): the rules of a tool call apply to "tool-call" only. */
  requestKind: RequestKind | null;
  approved: boolean;
  fields: FieldValues;
}

/** Rules for approvals that take no fields: every approval opened by `ctx.approval()`. */
export const NO_DECISION_FIELDS: DecisionRules = {
  fields: [],
  check: () => ({ recorded: {}, event: {} }),
  same: () => true,
  describe: (recorded) => (recorded.approved === true ? "approved" : "denied"),
};
