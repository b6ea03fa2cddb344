/**
 * Live event streams (SSE, streams/): one run's events, a session's (its turns' events), the
 * whole store's. Each message's id is the position after its event: a reconnect with
 * `Last-Event-ID` (or a first connect with `?after=`) resumes with no gap and no repeat; `0` asks
 * for the first event. Given no position, a stream of one run or session starts from its first
 * event, and the whole store's where the store's events end now (its history can be millions of
 * events). A run's stream ends after the run's final event.
 */
import { z } from "zod";
import { SteadError } from "../../errors.js";
import { route } from "../route-table.js";
import { runId } from "../schemas.js";
import type { Stead } from "../../stead/stead.js";
import type { StreamSource } from "../streams/subscriber.js";

const streamQuery = z
  .object({
    after: z
      .string()
      .min(1)
      .max(32_768)
      .optional()
      .describe("start after this position (an event's SSE id); `0`: from the first event. Absent: a run's or session's stream starts at its first event, the whole store's with what is written from now"),
  })
  .strict();
const sessionId = z.object({ sessionId: z.string().min(1).max(200) }).strict();

const runSource = (id: string): StreamSource => ({ runIds: () => Promise.resolve([id]), run: id });
const everyRun: StreamSource = { runIds: () => Promise.resolve(null), start: "now" };
/** A session's stream: every turn's events, its turns read from the store (and each new one learnt from its run.created). */
export const sessionSource = (stead: Stead, id: string): StreamSource => ({ runIds: () => stead.sessions.runIds(id), session: id });

export const STREAMS = [
  route({
    method: "GET",
    path: "/runs/:runId/stream",
    summary: "A run's events as they are written (SSE; model.delta is its live model text); ends after the run's final event, 204 when resumed past it",
    tag: "streams",
    action: "events.read",
    kind: "stream",
    params: runId,
    query: streamQuery,
    handle: async ({ stead, params }) => runSource((await stead.runs.get(params.runId)).id),
  }),
  route({
    method: "GET",
    path: "/sessions/:sessionId/stream",
    summary: "A session's events, every turn's, as they are written (SSE)",
    tag: "streams",
    action: "events.read",
    kind: "stream",
    params: sessionId,
    query: streamQuery,
    handle: async ({ stead, params }) => {
      if ((await stead.sessions.runIds(params.sessionId)).length === 0) {
        throw new SteadError("STEAD_SESSION_NOT_FOUND", `no session ${JSON.stringify(params.sessionId.slice(0, 100))}`, { fix: "list sessions with GET /api/v1/sessions" });
      }
      return sessionSource(stead, params.sessionId);
    },
  }),
  route({
    method: "GET",
    path: "/events/stream",
    summary: "Every run's events as they are written (SSE), from now unless `after` or Last-Event-ID says where (`0`: the first event)",
    tag: "streams",
    action: "events.read",
    kind: "stream",
    query: streamQuery,
    handle: () => Promise.resolve(everyRun),
  }),
  route({
    method: "GET",
    path: "/events/position",
    summary: "Where the store's event stream ends now: `after` for a stream of only what is written next",
    tag: "streams",
    action: "events.read",
    // An empty read (no run's events) returns the position past every event committed so far.
    handle: async ({ stead }) => ({ position: (await stead.runs.eventsAfter(null, { runIds: [], limit: 1 })).position }),
  }),
];
