/**
 * MCP over streamable HTTP, stateless: each POST to `/mcp` gets a fresh MCP server bound to that
 * request's caller and a fresh transport, answers with JSON, and both are closed. No MCP session
 * outlives a request, so every request is authenticated again (a revoked token stops at once)
 * and nothing is held in memory between calls. GET (a server-to-client stream) and DELETE (end a
 * session) have nothing to serve: 405, which clients take as "no stream offered".
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Stead } from "../../stead/stead.js";
import type { McpCaller } from "./caller.js";
import { createMcpServer } from "./mcp-server.js";

export interface McpHttpOptions {
  readonly stead: Stead;
  readonly caller: McpCaller;
  readonly maxBodyBytes: number;
  readonly logError?: (line: string) => void;
}

export async function mcpResponse(req: Request, o: McpHttpOptions): Promise<Response> {
  const server = createMcpServer(o.stead, o.caller, { transport: "http", ...(o.logError ? { logError: o.logError } : {}) });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, maxRequestBodySize: o.maxBodyBytes });
  await server.connect(transport);
  try {
    return await transport.handleRequest(req);
  } finally {
    await server.close();
  }
}

export function mcpMethodNotAllowed(): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed: this server answers POST only (stateless, no stream to open)" }, id: null }), {
    status: 405,
    headers: { Allow: "POST", "Content-Type": "application/json", "Cache-Control": "no-store" },
  });
}
