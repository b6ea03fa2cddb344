/**
 * Definitions and workers, from the store alone (what workers announced; no user code is loaded
 * by the server), and a start by a definition's name.
 */
import { z } from "zod";
import { route } from "../route-table.js";
import { startByRequest, startRequest } from "../start-request.js";

const definitionQuery = z.object({ name: z.string().min(1).max(128).optional().describe("only the definition of this name") }).strict();
const noQuery = z.object({}).strict();

export const DEFINITIONS = [
  route({
    method: "GET",
    path: "/definitions",
    summary: "The definitions workers announced (or the one named): kind, fingerprints, input JSON Schema, the live workers serving each and since when",
    tag: "definitions",
    action: "definitions.read",
    query: definitionQuery,
    handle: async ({ stead, query }) => ({ definitions: await stead.definitions.list(query.name === undefined ? {} : { name: query.name }) }),
  }),
  route({
    method: "GET",
    path: "/workers",
    summary: "The live workers, by their announcements: id, host, pid, the definitions each serves, since when, last seen",
    tag: "definitions",
    action: "definitions.read",
    query: noQuery,
    handle: async ({ stead }) => ({ workers: await stead.definitions.workers() }),
  }),
  route({
    method: "POST",
    path: "/runs",
    summary: "Start a run by its definition's name, its input checked against the announced input schema; served says whether a live worker serves it now (if not, the run waits)",
    tag: "control",
    action: "runs.start",
    idempotent: true,
    body: startRequest,
    handle: ({ stead, body, actor, idempotencyKey }) => startByRequest(stead, body, { by: actor, idempotencyKey, inputField: "body.input" }),
  }),
];
