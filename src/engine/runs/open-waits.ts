/**
 * Open waits across runs (an approvals inbox), newest first, built from two reads the store
 * already serves on indexes: one page of the runs that can have an open wait (status waiting,
 * paused or held, most recently updated first) and those runs' open waits (`runActivity`).
 *
 * Hazard, the bound: only the OPEN_WAITS_RUN_BOUND most recently updated such runs are looked
 * at. A store with more of them than that leaves out the open waits of the ones updated longest
 * ago; the answer says so (`truncated: true`). A store read over the waits table would lift the
 * bound, and needs an index on (status, kind, created_at) that no migration makes yet.
 */
import type { RunReads, RunStatus, WaitKind } from "../../store/types.js";
import { MAX_PAGE_SIZE } from "../../store/listing-cursor.js";
import { waitView } from "./views.js";
import type { OpenWaitView, OpenWaits } from "../../client/api-types.js";

export type { OpenWaitView, OpenWaits } from "../../client/api-types.js";

/** How many runs one read looks at: one listing page, the most the store serves. */
export const OPEN_WAITS_RUN_BOUND = MAX_PAGE_SIZE;
export const OPEN_WAITS_DEFAULT_LIMIT = 100;
/** A run with an open wait stands in one of these (a pause or a hold keeps the wait open). */
const WAITING_STATUSES: RunStatus[] = ["waiting", "paused", "held"];

/** `runBound` (at most OPEN_WAITS_RUN_BOUND) is for a test of the bound with a few runs. */
export async function openWaits(store: RunReads, filter: { kind?: WaitKind; limit?: number } = {}, runBound = OPEN_WAITS_RUN_BOUND): Promise<OpenWaits> {
  const limit = filter.limit ?? OPEN_WAITS_DEFAULT_LIMIT;
  const page = await store.listRuns({ status: WAITING_STATUSES, sort: "updatedAt", order: "desc", limit: Math.min(runBound, OPEN_WAITS_RUN_BOUND) });
  const runs = new Map(page.runs.map((r) => [r.id, r]));
  const activity = runs.size === 0 ? [] : await store.runActivity([...runs.keys()]);
  const waits: OpenWaitView[] = [];
  for (const a of activity) {
    const run = runs.get(a.runId);
    if (!run) continue;
    for (const w of a.openWaits) {
      if (w.status !== "open" || (filter.kind !== undefined && w.kind !== filter.kind)) continue;
      waits.push({ runId: run.id, definition: run.definition, sessionId: run.sessionId, runStatus: run.status, ...waitView(w) });
    }
  }
  waits.sort((x, y) => y.createdAt - x.createdAt || (x.runId < y.runId ? -1 : x.runId > y.runId ? 1 : x.name < y.name ? -1 : 1));
  return { waits: waits.slice(0, limit), truncated: page.nextCursor !== null };
}
