/**
 * Definitions and starts by name: what live workers serve, read from the store alone (the MCP
 * server loads no user code), and a run started by its definition's name, its input checked
 * against the schema workers announced. Starting one no live worker serves is allowed: the run
 * waits, and the result says so (`served: false`, `note`).
 */
import { z } from "zod";
import { startByRequest, startRequest } from "../../start-request.js";
import { READ_ONLY, tool } from "../tool-table.js";
import { idempotencyKey } from "./control.js";

const ms = z.number().describe("milliseconds since the epoch");

const servingWorker = z.looseObject({ workerId: z.string(), host: z.string(), pid: z.number().int(), fingerprint: z.string(), since: ms, lastSeenAt: ms });

const definitionView = z.looseObject({
  name: z.string(),
  kind: z.string().describe("workflow or agent"),
  served: z.boolean().describe("whether a live worker serves it now; a run started while none does waits for one"),
  workers: z.array(servingWorker).describe("the live workers serving it, the longest serving first"),
  since: ms.nullable().describe("when the longest-serving live worker announced it; null when none serves it"),
  fingerprints: z.array(z.string()).describe("the fingerprints live workers serve (a start's input must match each one's schema)"),
  inputSchema: z.record(z.string(), z.unknown()).nullable().describe("its input's JSON Schema; null when it declares none"),
  module: z.string().nullable(),
  firstAnnouncedAt: ms,
  lastSeenAt: ms,
});

export const DEFINITION_TOOLS = [
  tool({
    name: "definitions",
    title: "List definitions",
    description:
      "The workflows and agents workers have announced (or the one named): kind, fingerprints, the input's JSON Schema, and the live workers serving each and since when (as `stead definitions`). Use it before `start` to learn a definition's name and the input it takes.",
    action: "definitions.read",
    input: z.object({ name: z.string().min(1).max(128).optional().describe("only the definition of this name") }).strict(),
    output: z.looseObject({ definitions: z.array(definitionView) }),
    annotations: READ_ONLY,
    handle: async ({ stead, args }) => ({ definitions: await stead.definitions.list(args.name === undefined ? {} : { name: args.name }) }),
  }),
  tool({
    name: "start",
    title: "Start a run by definition name",
    description:
      "Start a run of a definition by its name (see `definitions`), with its input checked against the definition's announced input schema (as `stead start`). Returns the run's id and whether a live worker serves the definition now: if not (`served: false`), the run waits, pending, until one starts. A name no worker has announced is refused.",
    action: "runs.start",
    input: z
      .object({
        definition: startRequest.shape.definition,
        input: startRequest.shape.input,
        id: startRequest.shape.id,
        idempotencyKey,
      })
      .strict(),
    output: z.looseObject({
      id: z.string().describe("the run's id"),
      definition: z.string(),
      served: z.boolean().describe("whether a live worker serves the definition now"),
      workers: z.number().int().describe("how many live workers serve it now"),
      note: z.string().optional().describe("present when no live worker serves it: the run waits"),
      already: z.boolean().describe("true: an earlier call with this idempotency key started it; nothing changed now"),
    }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    handle: ({ stead, args, by }) =>
      startByRequest(stead, { definition: args.definition, input: args.input, ...(args.id === undefined ? {} : { id: args.id }) }, { by, idempotencyKey: args.idempotencyKey, inputField: "input" }),
  }),
];
