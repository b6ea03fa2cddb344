/**
 * `why`'s ways out rendered as MCP tool calls: the tool, the arguments the engine knows, and the
 * arguments a person must supply, by the tool's own argument names. A way no tool takes (start a
 * worker: it runs where the definition's code is) has `tool: null` and its facts as arguments.
 */
import type { Explanation, WayOut } from "../../engine/runs/why.js";
import type { ToolName } from "./tool-table.js";

export interface ToolCallWay {
  what: string;
  tool: ToolName | null;
  arguments: Record<string, unknown>;
  supply: string[];
}

export function toolCallFor(way: WayOut): ToolCallWay {
  const runId = way.runId;
  const out = (tool: ToolName | null, args: Record<string, unknown>): ToolCallWay => ({ what: way.what, tool, arguments: args, supply: [...way.supply] });
  switch (way.verb) {
    case "worker":
      return out(null, { definition: way.args.definition, module: way.args.module });
    case "events":
      return out("run_events", { runId });
    case "get":
      return out("get_run", { runId });
    case "why":
      return out("why", { runId });
    case "approve":
      return out("approve", { runId, wait: way.args.wait, ...(way.args.scope ? { scope: way.args.scope } : {}) });
    case "deny":
      return out("deny", { runId, wait: way.args.wait });
    case "signal":
      return out("signal", { runId, wait: way.args.name });
    case "release":
      return out("release", { runId, hold: way.args.hold, choice: way.args.choice });
    case "pause":
    case "resume":
    case "retry":
    case "cancel":
    case "fork":
      return out(way.verb, { runId });
  }
}

export function explanationForMcp(e: Explanation): { runId: string; status: string; text: string; waysOut: ToolCallWay[] } {
  return { runId: e.runId, status: e.status, text: e.text, waysOut: e.waysOut.map(toolCallFor) };
}
