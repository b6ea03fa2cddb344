/**
 * Runs as MCP resources: `stead://runs/{runId}`, a run in full as JSON (what `get_run` returns),
 * and a list of the newest runs. A read is authorised as `runs.read`; a refusal is a JSON-RPC
 * error whose message is the refusal's line and whose data is the refusal itself (an unknown run:
 * -32002, resource not found).
 */
import { McpError, ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { ResourceTemplate, type McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Stead } from "../../stead/stead.js";
import type { McpCaller } from "./caller.js";
import { refusalOf, refusalText } from "./refusal.js";
import { runInFullOf } from "./tools/reads.js";

export const RUN_URI_TEMPLATE = "stead://runs/{runId}";
/** How many runs the resource list names, newest first (list_runs pages through the rest). */
export const LISTED_RUNS = 100;
/** MCP's code for a resource that does not exist. */
const RESOURCE_NOT_FOUND = -32002;

export const runUri = (id: string): string => `stead://runs/${encodeURIComponent(id)}`;

function mcpErrorOf(e: unknown, logError: (what: string, e: unknown) => void, what: string): McpError {
  const { refusal, internal } = refusalOf(e);
  if (internal) logError(what, e);
  const code = refusal.status === 404 ? RESOURCE_NOT_FOUND : refusal.status < 500 ? ErrorCode.InvalidParams : ErrorCode.InternalError;
  return new McpError(code, refusalText(refusal), { error: refusal });
}

/** A URI's run id, percent-decoded; undecodable text is taken as it is (and refused as an id). */
function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

export function registerRunResources(server: McpServer, stead: Stead, caller: McpCaller, logError: (what: string, e: unknown) => void): void {
  const template = new ResourceTemplate(RUN_URI_TEMPLATE, {
    list: async () => {
      try {
        caller.authorize("runs.read");
        const { runs } = await stead.runs.list({ limit: LISTED_RUNS });
        return { resources: runs.map((r) => ({ uri: runUri(r.id), name: r.id, title: `${r.definition} ${r.id} (${r.status})`, description: `a run of ${r.definition}, ${r.status}`, mimeType: "application/json" })) };
      } catch (e) {
        throw mcpErrorOf(e, logError, "resources/list");
      }
    },
  });
  server.registerResource(
    "run",
    template,
    { title: "A run in full", description: `A run in full as JSON: its fields, journal, waits, holds and why (with the tool calls that move it on). The list names the ${LISTED_RUNS} newest runs.`, mimeType: "application/json" },
    async (uri, variables) => {
      try {
        caller.authorize("runs.read");
        const raw = variables.runId;
        const id = decoded(Array.isArray(raw) ? (raw[0] ?? "") : (raw ?? ""));
        return { contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(await runInFullOf(stead, id)) }] };
      } catch (e) {
        throw mcpErrorOf(e, logError, "resources/read");
      }
    },
  );
}
