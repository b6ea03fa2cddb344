import { TOOL_DECISIONS } from "../agent/tool-decisions.js";
import { Stead, type SteadOptions } from "./stead.js";

/**
 * A Stead instance: the composition root. It lives above engine/ and agent/ because it joins
 * them: the engine's control API, given the agent layer's rules for decisions on tool approvals
 * (edited arguments, scope), which the engine itself does not know.
 */
export function createStead(options: SteadOptions = {}): Stead {
  return new Stead(options, TOOL_DECISIONS);
}
