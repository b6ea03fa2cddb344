/**
 * Run listings as the API returns them: a page of runs (the store's keyset pages, see
 * store/listing-cursor.ts) and what a listing shows of each run besides its row. Neither reads a
 * journal: a page costs its size, whatever the store holds.
 */
import type { ListedRun, RunActivity, RunDamage, RunFilter, RunQuery, RunReads, RunSortKey, SortOrder } from "../../store/types.js";
import { holdView, waitView, type HoldView, type RunInfo, type WaitView } from "./views.js";

export { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../../store/listing-cursor.js";

/** Which runs: status (any of several), definition, session, parent, created / updated ranges (`…Since` inclusive, `…Before` exclusive, ms), id prefix (literal). */
export type RunListFilter = RunFilter;
/** A filter, a sort (`createdAt` or `updatedAt`, `asc` or `desc`; default newest created first), a page size, and the cursor of the page before. */
export type RunListQuery = RunQuery;
export type { RunSortKey, SortOrder };

export interface RunListPage {
  runs: RunInfo[];
  /** Pass it back as `cursor`, with the same filters and sort, for the next page; null on the last page. */
  nextCursor: string | null;
}

/** What a listing shows of a run besides its fields. */
export interface RunActivityView {
  runId: string;
  /** The journal's last entry; null before the first. */
  lastStep: { seq: number; id: string; kind: string; status: string; attempt: number } | null;
  /** The time of its latest event (a step, a claim, a wait, live model text): its last activity. */
  lastEventAt: number | null;
  /** A wait or hold whose sealed values failed to open is listed marked `damaged`, as is the activity (the first one's). */
  openWaits: WaitView[];
  openHolds: HoldView[];
  /** Set when an open wait or hold of the run is marked `damaged`: the first one's mark, so a listing can mark the run. */
  damaged?: RunDamage;
}

export async function listRunPage(store: RunReads, query: RunListQuery, view: (row: ListedRun) => Promise<RunInfo>): Promise<RunListPage> {
  const page = await store.listRuns(query);
  return { runs: await Promise.all(page.runs.map(view)), nextCursor: page.nextCursor };
}

function activityView(a: RunActivity): RunActivityView {
  const s = a.lastStep;
  const damaged = a.openWaits.find((w) => w.damaged)?.damaged ?? a.openHolds.find((h) => h.damaged)?.damaged;
  return {
    runId: a.runId,
    lastStep: s ? { seq: s.seq, id: s.stepId, kind: s.kind, status: s.status, attempt: s.attempt } : null,
    lastEventAt: a.lastEventAt,
    openWaits: a.openWaits.map(waitView),
    openHolds: a.openHolds.map(holdView),
    ...(damaged ? { damaged } : {}),
  };
}

/** For runs of a page (at most MAX_PAGE_SIZE ids): a few rows each, never a journal. */
export async function runActivity(store: RunReads, runIds: readonly string[]): Promise<RunActivityView[]> {
  return (await store.runActivity(runIds)).map(activityView);
}
