/**
 * Live workers as their announcements show them, from the store alone: a worker is listed while
 * an announcement of it is alive (refreshed within its bound, judged by the store's clock). A
 * worker that serves nothing it announces (a foreground run's worker, `runIds`) is not listed.
 */
import { MAX_PAGE_SIZE } from "../../store/listing-cursor.js";
import type { DefinitionAnnouncements, DefinitionRecord, RunReads } from "../../store/types.js";
import type { WorkerView } from "../../client/api-types.js";

export type { WorkerView } from "../../client/api-types.js";

/** How many running runs one listing of workers looks at for their leases: one listing page. */
export const WORKER_LEASES_BOUND = MAX_PAGE_SIZE;

/** The live workers in `records` (the store's catalog), the longest serving first. */
export function workerViews(records: readonly DefinitionRecord[]): WorkerView[] {
  const byId = new Map<string, WorkerView>();
  for (const r of records) {
    for (const w of r.workers) {
      if (!w.alive) continue;
      const seen = byId.get(w.workerId);
      if (seen) {
        seen.definitions.push({ name: w.name, fingerprint: w.fingerprint });
        seen.since = Math.min(seen.since, w.announcedAt);
        seen.lastSeenAt = Math.max(seen.lastSeenAt, w.seenAt);
      } else {
        byId.set(w.workerId, { workerId: w.workerId, host: w.host, pid: w.pid, definitions: [{ name: w.name, fingerprint: w.fingerprint }], since: w.announcedAt, lastSeenAt: w.seenAt, leases: [] });
      }
    }
  }
  const out = [...byId.values()];
  for (const w of out) w.definitions.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return out.sort((a, b) => a.since - b.since || (a.workerId < b.workerId ? -1 : 1));
}

/**
 * The live workers with their leases. Hazard, the bound: leases are read from one page of running
 * runs (the WORKER_LEASES_BOUND most recently updated); past that many running runs, a worker's
 * older leases are left out.
 */
export async function listWorkers(store: DefinitionAnnouncements & RunReads): Promise<WorkerView[]> {
  const [records, running] = await Promise.all([store.listDefinitions({}, Date.now()), store.listRuns({ status: ["running"], sort: "updatedAt", order: "desc", limit: WORKER_LEASES_BOUND })]);
  const workers = workerViews(records);
  const byId = new Map(workers.map((w) => [w.workerId, w]));
  for (const r of running.runs) if (r.leaseOwner !== null) byId.get(r.leaseOwner)?.leases.push({ runId: r.id, expiresAt: r.leaseExpiresAt });
  for (const w of workers) w.leases.sort((a, b) => (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
  return workers;
}
