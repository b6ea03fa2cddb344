/**
 * What a mutation means, as one ordered list: the preconditions, each with the refusal it gives,
 * then the writes, each with the condition under which it applies. A store applies a mutation by
 * running every check of CHECKS in order (the first that fails refuses the mutation, and nothing
 * of it is written), then every applicable write of WRITES in order.
 *
 * SQLite's applyMutation iterates these lists with one handler per phase; Postgres's
 * stead_apply_mutation is rendered from them, one piece of PL/pgSQL per phase
 * (postgres/mutation-function.ts, installed from migration 6). A phase without a handler or a
 * piece fails the typecheck; test/store.mutation-plan.test.ts reads the installed function back and
 * fails unless it is that rendering.
 *
 * Invariant: the order is part of the meaning. Checks: the run row is read (and on Postgres locked)
 * first, so every other check sees it; the idempotency key is recorded last, since recording it is
 * a write that a later refusal would have to undo. Writes: steps are deleted before the new ones
 * are written (a retry rewrites from a position), and compacted events are deleted after the new
 * events are inserted (SQLite's events.seq is max + 1: deleting the highest rows first would hand
 * their numbers to the new events, below what a follower has already read).
 */
import type { Mutation, UnitResult } from "../types.js";

export type RefusalReason = Extract<UnitResult, { ok: false }>["reason"];

export interface Check<Name extends string = string> {
  readonly name: Name;
  /** Whether the mutation asks for this check. */
  readonly applies: (m: Mutation) => boolean;
  /** The unit's refusal when the check fails. */
  readonly reason: RefusalReason;
  /** Whether the refusal reports the run's current status. */
  readonly reportsStatus: boolean;
  /** Postgres up to schema 11: the SQLSTATE stead_apply_mutation raises (its MESSAGE_TEXT is `reason`); from 12 it returns the refusal. */
  readonly sqlstate: string;
}

/** Mutation fields that are not a write: the run it is about, its preconditions, and how a refusal counts. */
export type NotAWrite = "runId" | "expect" | "optional" | "idempotency";

export interface Write<Name extends keyof Mutation = keyof Mutation> {
  /** The Mutation field the write comes from. */
  readonly name: Name;
  readonly applies: (m: Mutation) => boolean;
}

const some = (xs: readonly unknown[] | undefined): boolean => xs !== undefined && xs.length > 0;

export const CHECKS = [
  { name: "run", applies: () => true, reason: "missing", reportsStatus: false, sqlstate: "ST003" },
  { name: "openWait", applies: (m) => m.expect?.openWait !== undefined, reason: "wait", reportsStatus: false, sqlstate: "ST001" },
  { name: "openHold", applies: (m) => m.expect?.openHold !== undefined, reason: "hold", reportsStatus: false, sqlstate: "ST002" },
  { name: "lease", applies: (m) => m.expect?.lease !== undefined, reason: "lease", reportsStatus: true, sqlstate: "ST004" },
  { name: "status", applies: (m) => m.expect?.status !== undefined, reason: "status", reportsStatus: true, sqlstate: "ST005" },
  // Records the key as it checks it: an unexpired key refuses, an expired one is replaced.
  { name: "idempotency", applies: (m) => m.idempotency !== undefined, reason: "idempotency", reportsStatus: true, sqlstate: "ST006" },
] as const satisfies readonly Check[];

export type CheckName = (typeof CHECKS)[number]["name"];

export const WRITES = [
  // A patch whose every field is already the row's may write nothing (lostClaims 0 on a step commit).
  { name: "run", applies: (m) => m.run !== undefined },
  { name: "deleteStepsFrom", applies: (m) => m.deleteStepsFrom !== undefined },
  { name: "steps", applies: (m) => some(m.steps) },
  { name: "snapshots", applies: (m) => some(m.snapshots) },
  { name: "waits", applies: (m) => some(m.waits) },
  { name: "reopenWaits", applies: (m) => some(m.reopenWaits) },
  // Resolving a wait "resolved" also completes its journal step with the result as its output.
  { name: "resolveWaits", applies: (m) => some(m.resolveWaits) },
  { name: "holds", applies: (m) => some(m.holds) },
  { name: "releaseHolds", applies: (m) => some(m.releaseHolds) },
  // An id that already exists is a retry of the same creation: left as it is.
  { name: "newRuns", applies: (m) => some(m.newRuns) },
  { name: "events", applies: (m) => some(m.events) },
  { name: "deleteEvents", applies: (m) => m.deleteEvents !== undefined },
] as const satisfies readonly Write[];

export type WriteName = (typeof WRITES)[number]["name"];

/** Every field of Mutation is a check's input or a write: a field added to Mutation without a phase fails here. */
type Unplanned = Exclude<keyof Mutation, NotAWrite | WriteName>;
export const EVERY_FIELD_PLANNED: [Unplanned] extends [never] ? true : { unplanned: Unplanned } = true;
