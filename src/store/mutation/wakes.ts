/**
 * Which applied writes may make a run claimable, so that a worker should claim at once rather than
 * at its next poll: a run set pending (an answered wait, a release, a resume, a retry, a woken
 * timer), a pending run created, and a run ended (its parent's child wait, a session's next turn).
 * A wake that finds nothing to claim costs one claim query; a missed one only delays until the poll.
 * Postgres's stead_commit computes the same in SQL (migrations.ts) and NOTIFYs in its transaction.
 */
import type { Mutation, RunStatus } from "../types.js";

const WAKING: ReadonlySet<RunStatus> = new Set<RunStatus>(["pending", "completed", "failed", "cancelled"]);

export function wakes(m: Mutation): boolean {
  const status = m.run?.status;
  if (status !== undefined && WAKING.has(status)) return true;
  return m.newRuns?.some((r) => (r.status ?? "pending") === "pending") ?? false;
}
