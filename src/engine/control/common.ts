import { SteadError } from "../../errors.js";
import type { Commits, EventRow, Mutation, RunReads, RunRow, UnitResult } from "../../store/types.js";
import { keyTaken } from "../../store/faults.js";
import type { ControlVerb, KeyedCall } from "./idempotency.js";
import { idExcerpt } from "../ids.js";
import type { DecisionRules } from "./decision-rules.js";

/**
 * What every control command shares. Each command reads, decides, then commits one unit whose
 * preconditions (status, open wait, open hold) make it refuse a run that changed in between, with
 * the command's idempotency key (if any) in the same unit.
 */

/** A caller's idempotency key for one command, and how long it is kept. */
export interface KeyOption {
  key: string;
  ttlMs: number;
}

/**
 * What every control verb is given besides its own arguments: the store, who acts, the
 * caller's idempotency key, the payload limit, and the instance's rules for decisions' fields.
 */
export interface ControlCall<S> {
  store: S;
  /** Who acts: recorded on the events (and the wait) the verb writes; null when not said. */
  by: string | null;
  key?: KeyOption | undefined;
  /** The largest payload (bytes) a verb may write: a signal's, a decision's, a release's result. */
  limit: number;
  /** Which decision fields beyond by and reason this instance reads (createStead: the agent's tool approvals). */
  rules: DecisionRules;
}

export function keyed(k: KeyOption | undefined, verb: ControlVerb, scope: string, args: unknown, by: string | null): KeyedCall | undefined {
  return k ? { verb, scope, key: k.key, args, by, ttlMs: k.ttlMs } : undefined;
}

export async function requireRun(store: Commits & RunReads, runId: string): Promise<RunRow> {
  const run = await store.getRun(runId);
  if (!run) {
    throw new SteadError("STEAD_RUN_NOT_FOUND", `no run with id ${idExcerpt(runId)}`, { runId, fix: "list runs with `stead ps`" });
  }
  return run;
}

export function raced(runId: string, r: UnitResult, what: string): SteadError {
  return new SteadError("STEAD_INVALID_STATE", `run ${runId} changed while ${what} (${r.ok ? "ok" : r.reason}); nothing was written`, {
    runId,
    fix: "look at it again with `stead why " + runId + "` and retry",
  });
}

/** Commits one unit; a unit refused for its idempotency key means a concurrent call with the key won. */
export async function commitOne(store: Commits & RunReads, unit: Mutation[]): Promise<UnitResult> {
  const [r] = await store.commit([unit]);
  const result = r ?? { ok: false, reason: "missing", runId: unit[0]?.runId ?? "" };
  const key = unit.find((m) => m.idempotency)?.idempotency;
  if (!result.ok && result.reason === "idempotency" && key) throw keyTaken(key.verb, key.scope, key.key);
  return result;
}

export function stateError(run: RunRow, verb: string, fix: string): SteadError {
  return new SteadError("STEAD_INVALID_STATE", `cannot ${verb} run ${run.id}: it is ${run.status}`, { runId: run.id, status: run.status, fix });
}

/** The latest event of `type` of a run, if any (who did what, and when). */
export async function lastEvent(store: Commits & RunReads, runId: string, type: string): Promise<EventRow | undefined> {
  let last: EventRow | undefined;
  for (let after = 0; ; ) {
    const page = await store.events({ runId, afterSeq: after, limit: 1000 });
    for (const e of page) if (e.type === type) last = e;
    const end = page[page.length - 1];
    if (page.length < 1000 || !end) return last;
    after = end.seq;
  }
}

export function dataOf(e: EventRow | undefined): Record<string, unknown> {
  if (!e) return {};
  try {
    return JSON.parse(e.data) as Record<string, unknown>;
  } catch {
    return {};
  }
}

export const byText = (by: unknown): string => (typeof by === "string" && by ? ` by ${by}` : "");
export const atText = (at: unknown): string => (typeof at === "number" ? ` at ${new Date(at).toISOString()}` : "");
