/**
 * MCP over stdio: the server on this process's standard input and output, which then carry the
 * protocol and nothing else. Resolves when the client closes standard input (or the transport
 * closes, or SIGINT/SIGTERM); the caller then closes the server and the instance.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Stead } from "../../stead/stead.js";
import type { McpCaller } from "./caller.js";
import { createMcpServer } from "./mcp-server.js";

export async function serveStdio(stead: Stead, caller: McpCaller, logError: (line: string) => void): Promise<{ ended: Promise<void>; close: () => Promise<void> }> {
  const server = createMcpServer(stead, caller, { transport: "stdio", logError });
  const transport = new StdioServerTransport();
  const ended = new Promise<void>((resolve) => {
    process.stdin.once("end", resolve);
    process.stdin.once("close", resolve);
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
    transport.onclose = () => resolve();
  });
  await server.connect(transport);
  return { ended, close: () => server.close() };
}
