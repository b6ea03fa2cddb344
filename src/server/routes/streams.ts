/**
 * Live event streams (SSE, streams/): one run's events, a session's (its turns' events), the
 * whole store's. Each message's id is the position after its event: a reconnect with
 * `Last-Event-ID` (or a first connect with `?after=`) resumes with no gap and no repeat. A stream
 * of one run or session starts from its first event unless told where.
 */
import { z } from "zod";
import { SteadError } from "../../errors.js";
import { route } from "../route-table.js";
import { runId } from "../schemas.js";
import type { StreamSource } from "../streams/subscriber.js";

const streamQuery = z.object({ after: z.string().min(1).max(32_768).optional() }).strict();
const sessionId = z.object({ sessionId: z.string().min(1).max(200) }).strict();

const fixed = (ids: readonly string[] | null): StreamSource => ({ runIds: () => Promise.resolve(ids), grows: false });

export const STREAMS = [
  route({
    method: "GET",
    path: "/runs/:runId/stream",
    summary: "A run's events as they are written (SSE; model.delta is its live model text)",
    tag: "streams",
    action: "events.read",
    kind: "stream",
    params: runId,
    query: streamQuery,
    handle: async ({ stead, params }) => fixed([(await stead.get(params.runId)).id]),
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
      if ((await stead.sessionRunIds(params.sessionId)).length === 0) {
        throw new SteadError("STEAD_SESSION_NOT_FOUND", `no session ${JSON.stringify(params.sessionId.slice(0, 100))}`, { fix: "list sessions with GET /api/v1/sessions" });
      }
      return { runIds: () => stead.sessionRunIds(params.sessionId), grows: true } satisfies StreamSource;
    },
  }),
  route({
    method: "GET",
    path: "/events/stream",
    summary: "Every run's events as they are written (SSE)",
    tag: "streams",
    action: "events.read",
    kind: "stream",
    query: streamQuery,
    handle: () => Promise.resolve(fixed(null)),
  }),
  route({
    method: "GET",
    path: "/events/position",
    summary: "Where the store's event stream ends now: `after` for a stream of only what is written next",
    tag: "streams",
    action: "events.read",
    // An empty read (no run's events) returns the position past every event committed so far.
    handle: async ({ stead }) => ({ position: (await stead.eventsAfter(null, { runIds: [], limit: 1 })).position }),
  }),
];
