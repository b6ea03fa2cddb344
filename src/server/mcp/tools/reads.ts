/** Reads: runs, one run in full, why, events, holds, sessions and a session's transcript. */
import { z } from "zod";
import type { Stead } from "../../../stead/stead.js";
import { RUN_STATUSES } from "../../../store/types.js";
import { runListing } from "../../listing-query.js";
import { runId, runList } from "../../schemas.js";
import { eventView, explanation, holdView, runInFull, runInfo, sessionView, turnTranscript } from "../outputs.js";
import { READ_ONLY, tool } from "../tool-table.js";
import { explanationForMcp } from "../ways-out.js";

export const runArg = runId.shape.runId.describe("the run's id");

/** The HTTP query's numbers are coerced from text; a JSON argument is a number or refused. */
const count = (max: number) => z.number().int().min(1).max(max);
const time = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).describe("milliseconds since the epoch");
const listingText = z.string().min(1).max(200);

/** A run in full: what `get_run` and the `stead://runs/{runId}` resource return. */
export async function runInFullOf(stead: Stead, id: string) {
  const run = await stead.runs.get(id);
  const [journal, waits, holds, why] = await Promise.all([stead.runs.journal(run.id), stead.runs.waits(run.id), stead.holds.list({ runId: run.id, open: false }), stead.runs.why(run.id)]);
  return { run, journal, waits, holds, why: explanationForMcp(why) };
}

export const READ_TOOLS = [
  tool({
    name: "list_runs",
    title: "List runs",
    description:
      "A page of runs, newest created first unless sorted otherwise, filtered by statuses, definition, session, parent run, creation or change time (ms) and id prefix, with the total that match (as `stead ps`); pass nextCursor back as `cursor`, with the same filters and sort, for the next page. Use it to find runs waiting for an answer (status waiting) or on hold (status held).",
    action: "runs.read",
    input: z
      .object({
        status: z.array(z.enum(RUN_STATUSES)).min(1).optional().describe("only runs with one of these statuses"),
        definition: runList.shape.definition.describe("only runs of this definition"),
        sessionId: listingText.optional().describe("only the turns of this session"),
        parentId: listingText.optional().describe("only the children of this run"),
        createdSince: time.optional().describe("created at or after this time"),
        createdBefore: time.optional().describe("created before this time"),
        updatedSince: time.optional().describe("changed at or after this time"),
        updatedBefore: time.optional().describe("changed before this time"),
        idPrefix: listingText.optional().describe("only ids starting with this text (taken literally)"),
        sort: runListing.shape.sort,
        order: runListing.shape.order,
        limit: count(1000).optional().describe("runs per page (default 50)"),
        cursor: runListing.shape.cursor,
      })
      .strict(),
    output: z.looseObject({
      runs: z.array(runInfo),
      nextCursor: z.string().nullable().describe("the next page's cursor; null on the last page"),
      total: z.number().int().describe("runs that match the filters, on every page together"),
    }),
    annotations: READ_ONLY,
    handle: async ({ stead, args }) => {
      const { sort, order, limit, cursor, ...filter } = args;
      const page = await stead.runs.list({ ...filter, ...(sort ? { sort } : {}), ...(order ? { order } : {}), ...(cursor ? { cursor } : {}), limit: limit ?? 50 });
      return { ...page, total: await stead.runs.count(filter) };
    },
  }),
  tool({
    name: "get_run",
    title: "Get a run in full",
    description: "One run in full: its fields (input, output or error), journal of steps, waits, holds, and why it stands where it does with the tool calls that move it on (as `stead status`).",
    action: "runs.read",
    input: z.object({ runId: runArg }).strict(),
    output: runInFull,
    annotations: READ_ONLY,
    handle: ({ stead, args }) => runInFullOf(stead, args.runId),
  }),
  tool({
    name: "why",
    title: "Why a run is where it is",
    description: "Why a run is where it is, in one paragraph, and each way forward as the tool call that takes it: `tool` and `arguments`, with `supply` naming the arguments a person must give (as `stead why`).",
    action: "runs.read",
    input: z.object({ runId: runArg }).strict(),
    output: explanation,
    annotations: READ_ONLY,
    handle: async ({ stead, args }) => explanationForMcp(await stead.runs.why(args.runId)),
  }),
  tool({
    name: "run_events",
    title: "A run's events",
    description: "A run's events (run.claimed, step.completed, run.held, …) after a sequence number, oldest first (as `stead logs`). Call again with `after` set to the returned `last` to get what happened since.",
    action: "events.read",
    input: z
      .object({
        runId: runArg,
        after: z.number().int().min(0).optional().describe("only events after this sequence number (default 0: from the start)"),
        limit: count(1000).optional().describe("at most this many events (default 500)"),
      })
      .strict(),
    output: z.looseObject({ events: z.array(eventView), last: z.number().int().describe("the last event's sequence number (`after` when none came): pass it as `after` next time") }),
    annotations: READ_ONLY,
    handle: async ({ stead, args }) => {
      const after = args.after ?? 0;
      const events = await stead.runs.events({ runId: args.runId, afterSeq: after, limit: args.limit ?? 500 });
      return { events, last: events.at(-1)?.seq ?? after };
    },
  }),
  tool({
    name: "list_holds",
    title: "List holds",
    description: "Holds: runs stopped until a person chooses a way out (process_failed, ambiguous_effect, definition_changed, nondeterminism, recovery_gap, storage). Open ones unless `open` is false; optionally of one run (as `stead holds`).",
    action: "runs.read",
    input: z.object({ runId: runArg.optional(), open: z.boolean().optional().describe("false: released holds too (default true)") }).strict(),
    output: z.looseObject({ holds: z.array(holdView) }),
    annotations: READ_ONLY,
    handle: async ({ stead, args }) => ({ holds: await stead.holds.list({ ...(args.runId ? { runId: args.runId } : {}), open: args.open !== false }) }),
  }),
  tool({
    name: "list_sessions",
    title: "List sessions",
    description: "Sessions (conversations with an agent), most recently active first: their definition, turns, open turns, current and last turn (as `stead sessions`).",
    action: "sessions.read",
    input: z.object({ limit: count(1000).optional().describe("at most this many sessions") }).strict(),
    output: z.looseObject({ sessions: z.array(sessionView) }),
    annotations: READ_ONLY,
    handle: async ({ stead, args }) => ({ sessions: await stead.sessions.list(args.limit === undefined ? {} : { limit: args.limit }) }),
  }),
  tool({
    name: "session_transcript",
    title: "A session's transcript",
    description: "A session's transcript, turn by turn: user inputs, model responses, tool calls with their approvals and results, rebuilt from the journal (as `stead sessions show`).",
    action: "sessions.read",
    input: z.object({ session: z.string().min(1).max(200).describe("the session's id") }).strict(),
    output: z.looseObject({ session: z.string(), definition: z.string(), turns: z.array(turnTranscript) }),
    annotations: READ_ONLY,
    handle: ({ stead, args }) => stead.sessions.transcript(args.session),
  }),
];
