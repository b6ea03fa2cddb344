/**
 * The run listing: one page of runs, computed in the store, and the cursor of the next. Each run
 * carries its `lastStep` and `lastEventAt` (a few rows per run of the page, never a journal), and
 * `damaged` when its row, or an open wait or hold of it, failed to open.
 */
import { asQueryRefusal, runListing } from "../listing-query.js";
import { route } from "../route-table.js";

export const RUN_LISTING = [
  route({
    method: "GET",
    path: "/runs",
    summary: "A page of runs (newest created first by default), filtered by status, definition, session, parent, time ranges and id prefix; nextCursor continues it",
    tag: "runs",
    action: "runs.read",
    query: runListing,
    handle: async ({ stead, query }) => {
      try {
        const page = await stead.runs.list(query);
        const activity = new Map((await stead.runs.activity(page.runs.map((r) => r.id))).map((a) => [a.runId, a]));
        return {
          ...page,
          runs: page.runs.map((r) => {
            const a = activity.get(r.id);
            // The run's own row, else an open wait or hold of it: either way GET /runs/:id refuses.
            const damaged = r.damaged ?? a?.damaged;
            return { ...r, lastStep: a?.lastStep ?? null, lastEventAt: a?.lastEventAt ?? null, ...(damaged ? { damaged } : {}) };
          }),
        };
      } catch (e) {
        throw asQueryRefusal(e);
      }
    },
  }),
];
