/** Every tool of the MCP server, in the order a client lists them. */
import type { McpTransportKind, Tool } from "../tool-table.js";
import { CONTROL_TOOLS } from "./control.js";
import { DEFINITION_TOOLS } from "./definitions.js";
import { READ_TOOLS } from "./reads.js";
import { SESSION_TOOLS } from "./sessions.js";
import { workspaceTools } from "./workspace.js";

export const toolsFor = (transport: McpTransportKind): readonly Tool[] => [...READ_TOOLS, ...workspaceTools(transport), ...DEFINITION_TOOLS, ...CONTROL_TOOLS, ...SESSION_TOOLS];
