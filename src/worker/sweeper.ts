import { resolveWaitUnit } from "../engine/runs/waits.js";
import type { ClaimsAndLeases, Commits, RunReads } from "../store/types.js";
import { ownerIsDead } from "./owner.js";

/**
 * Wakes every due wait with a wake time (a timer, or a quota park whose provider reset has come):
 * its wait resolves with `{ wakeAt, firedAt }`, its step completes, a waiting run becomes pending.
 */
export async function wakeDueTimers(store: ClaimsAndLeases & Commits & RunReads, now: number, limit = 500): Promise<number> {
  // A damaged one (its sealed values changed) stays asleep: its wake time is clear, unauthenticated text.
  const due = (await store.dueTimers(now, limit)).filter((w) => !w.damaged);
  if (due.length === 0) return 0;
  const units = due.map((w) =>
    resolveWaitUnit(w.runId, w, JSON.stringify({ wakeAt: w.wakeAt, firedAt: now }), w.kind, {
      type: "wait.resolved",
      data: { wait: w.name, kind: w.kind, wakeAt: w.wakeAt },
    }),
  );
  const results = await store.commit(units);
  return results.filter((r) => r.ok).length;
}

/**
 * Ends at once the leases whose owner process on this host is gone (crashed, killed), so a
 * replacement worker need not wait for the lease to time out. Owners on other hosts are left to
 * lease expiry. Returns the run ids whose leases were ended.
 */
export async function expireDeadOwners(store: ClaimsAndLeases & Commits & RunReads, host: string): Promise<string[]> {
  const leases = await store.leasesOnHost(host);
  const expired: string[] = [];
  for (const l of leases) {
    if (l.leaseExpiresAt !== null && l.leaseExpiresAt <= Date.now()) continue;
    if (!ownerIsDead({ host: l.ownerHost, pid: l.ownerPid, start: l.ownerStart })) continue;
    if (await store.expireLease(l.runId, l.fence, `owner process ${l.ownerPid ?? "?"} on ${host} is gone`)) expired.push(l.runId);
  }
  return expired;
}
