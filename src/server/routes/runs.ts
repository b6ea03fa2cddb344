/** Reads: one run in full, its events, holds and sessions (the listing is run-listing.ts). */
import { route } from "../route-table.js";
import { eventList, holdList, journalPage, runDetail, runId, waitList } from "../schemas.js";

export const RUN_READS = [
  route({
    method: "GET",
    path: "/runs/:runId",
    summary: "One run in full: its fields, journal, waits, holds and why it stands where it does; journal=false leaves the journal out and gives journalLength",
    tag: "runs",
    action: "runs.read",
    params: runId,
    query: runDetail,
    handle: async ({ stead, params, query }) => {
      const run = await stead.runs.get(params.runId);
      const [journal, waits, holds, why] = await Promise.all([stead.runs.journal(run.id), stead.runs.waits(run.id), stead.holds.list({ runId: run.id, open: false }), stead.runs.why(run.id)]);
      if (query.journal === "false") return { run, journalLength: journal.length, waits, holds, why };
      return { run, journal, waits, holds, why };
    },
  }),
  route({
    method: "GET",
    path: "/runs/:runId/journal",
    summary: "A page of a run's journal in journal order (offset from 0, limit 1 to 1000, default 200; or step: the page that holds it), with the journal's length",
    tag: "runs",
    action: "runs.read",
    params: runId,
    query: journalPage,
    handle: ({ stead, params, query }) => stead.runs.journalPage(params.runId, { ...(query.offset === undefined ? {} : { offset: query.offset }), ...(query.limit === undefined ? {} : { limit: query.limit }), ...(query.step === undefined ? {} : { step: query.step }) }),
  }),
  route({
    method: "GET",
    path: "/waits",
    summary: "Open waits across runs, newest first (kind=, limit 1 to 1000, default 100), each with its run; looks at the 1000 most recently updated runs that can wait (truncated says when there were more)",
    tag: "runs",
    action: "runs.read",
    query: waitList,
    handle: ({ stead, query }) => stead.waits.list({ ...(query.kind === undefined ? {} : { kind: query.kind }), ...(query.limit === undefined ? {} : { limit: query.limit }) }),
  }),
  route({
    method: "GET",
    path: "/tally",
    summary: "Runs by status, open waits and holds by kind: grouped counts",
    tag: "runs",
    action: "runs.read",
    handle: ({ stead }) => stead.admin.tally(),
  }),
  route({
    method: "GET",
    path: "/runs/:runId/events",
    summary: "A run's events after a sequence number",
    tag: "runs",
    action: "events.read",
    params: runId,
    query: eventList,
    handle: async ({ stead, params, query }) => ({ events: await stead.runs.events({ runId: params.runId, afterSeq: query.after ?? 0, limit: query.limit ?? 500 }) }),
  }),
  route({
    method: "GET",
    path: "/holds",
    summary: "Holds (open ones unless open=false), optionally of one run",
    tag: "runs",
    action: "runs.read",
    query: holdList,
    handle: async ({ stead, query }) => ({ holds: await stead.holds.list({ ...(query.runId ? { runId: query.runId } : {}), open: query.open !== "false" }) }),
  }),
  route({
    method: "GET",
    path: "/sessions",
    summary: "Sessions, most recently active first",
    tag: "sessions",
    action: "sessions.read",
    handle: async ({ stead }) => ({ sessions: await stead.sessions.list() }),
  }),
];
