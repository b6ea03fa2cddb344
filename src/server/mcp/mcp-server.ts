/**
 * The MCP server over one Stead instance and one caller: every tool of the table (tools/) and
 * the runs as resources (resources.ts). A tool call is checked in this order, each step refusing
 * before anything is read or written: its arguments against the tool's input schema (the SDK's
 * own refusal, `isError: true`), the caller's role for the tool's action, then the handler, whose
 * refusals are the control API's. A result is checked against the tool's output schema before it
 * is sent; a result that does not match is an internal error, logged, and never sent.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { redactTokens } from "../../redaction/redact.js";
import type { Stead } from "../../stead/stead.js";
import type { McpCaller } from "./caller.js";
import { envelope, refusalOf, toolError } from "./refusal.js";
import { registerRunResources } from "./resources.js";
import type { McpTransportKind, Tool } from "./tool-table.js";
import { toolsFor } from "./tools/index.js";

export interface McpServerOptions {
  readonly transport: McpTransportKind;
  /** Where a failure that is not the caller's is logged (never given a token or a payload). */
  readonly logError?: (line: string) => void;
}

const INSTRUCTIONS =
  "Stead runs long-lived workflows and AI agents durably. Find runs with list_runs (status waiting: they wait for an answer; held: for a person's choice); " +
  "call why for where a run stands and the tool calls that move it on (waysOut: tool, arguments, and the arguments you must supply). " +
  "Control tools (approve, deny, signal, release, pause, resume, cancel, retry, fork) take an idempotencyKey: pass one to make a retry safe. " +
  "Runs are also resources: stead://runs/{runId}.";

/** From package.json, three levels up from both src/server/mcp and dist/server/mcp. */
function version(): string {
  try {
    return (JSON.parse(readFileSync(join(__dirname, "..", "..", "..", "package.json"), "utf8")) as { version?: string }).version ?? "0.0.0";
  } catch {
    return "0.0.0";
  }
}

export function createMcpServer(stead: Stead, caller: McpCaller, options: McpServerOptions): McpServer {
  const server = new McpServer({ name: "stead", title: "Stead", version: version() }, { instructions: INSTRUCTIONS, capabilities: { tools: {}, resources: {} } });
  const logError = (what: string, e: unknown) => options.logError?.(redactTokens(`${what}: ${e instanceof Error ? `${e.name}: ${e.message}` : "a non-error was thrown"}`));
  for (const t of toolsFor(options.transport)) {
    const call = async (args: unknown): Promise<CallToolResult> => {
      try {
        caller.authorize(t.action);
        return checkedResult(t, await t.handle({ stead, args, by: caller.by, authorize: (action) => caller.authorize(action) }));
      } catch (e) {
        const { refusal, internal } = refusalOf(e);
        if (internal) logError(`tool ${t.name}`, e);
        return toolError(refusal);
      }
    };
    server.registerTool(t.name, { title: t.title, description: t.description, inputSchema: t.input, outputSchema: envelope(t.output), annotations: { title: t.title, ...t.annotations } }, call);
  }
  registerRunResources(server, stead, caller, logError);
  return server;
}

/** The result as JSON, as text and as structured content, once it matches the tool's output schema. */
function checkedResult(t: Tool, result: object): CallToolResult {
  const data = JSON.parse(JSON.stringify(result)) as Record<string, unknown>;
  const checked = t.output.safeParse(data);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new Error(`the result does not match the output schema at ${(issue?.path ?? []).map(String).join(".") || "its root"}: ${issue?.message ?? "invalid"}`);
  }
  return { content: [{ type: "text", text: JSON.stringify(data) }], structuredContent: data };
}
