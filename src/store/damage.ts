/**
 * A listed row's damage as the refusal a caller gets when it needs that row's values: a set read
 * whole (a session's turns) or a write that follows from it cannot go on with a hole in it.
 */
import { SteadError } from "../errors.js";
import type { RunDamage } from "./records.js";

export function damageRefusal(d: RunDamage, ids: { runId?: string; session?: string } = {}): SteadError {
  return new SteadError(d.code, d.message, { ...ids, fix: "restore the store (or that row) from a backup" });
}
