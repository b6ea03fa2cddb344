import type { ErrorObject } from "ajv";
import type { DecisionFields, DecisionRules } from "../engine/control/decision-rules.js";
import { sameArgs } from "../engine/control/idempotency.js";
import { compileJsonSchema } from "../engine/definitions/json-schema.js";
import { SteadError } from "../errors.js";

declare module "../engine/control/decision-rules.js" {
  interface DecisionFields {
    /** Tool approvals only: replacement arguments, validated against the tool's input schema (an invalid edit is refused, the wait stays open). */
    input?: unknown;
    /** Tool approvals only: "run" approves every later call of the same tool in this run. Default "once". */
    scope?: "once" | "run";
  }
}

/** The fields a decision on an agent's tool approval takes (see `DecisionFields`). */
export type ToolDecisionOptions = Pick<DecisionFields, "input" | "scope">;

/**
 * The rules of decisions on an agent's tool approvals (a call parked for a person): edited
 * arguments, checked here against the JSON Schema recorded in the wait (the CLI need not load the
 * agent's code), their scope, and the fingerprint of the call decided on, recorded so the loop
 * applies the decision to that exact call only. An approval that is not a tool's takes no fields.
 */
export const TOOL_DECISIONS: DecisionRules = {
  fields: ["input", "scope"],
  check({ runId, name, request, requestKind, approved, fields }) {
    const d = fields as ToolDecisionOptions;
    const tool = requestKind === "tool-call" ? toolRequest(request) : null;
    if (!tool) {
      if (d.input !== undefined || d.scope !== undefined) {
        throw new SteadError("STEAD_BAD_OPTION", `"${name}" on run ${runId} is not a tool approval: edited arguments and scope apply only to an agent's tool calls`, {
          runId,
          fix: `decide without --edit/--scope: stead ${approved ? "approve" : "deny"} ${runId} ${name}`,
        });
      }
      return { recorded: {}, event: {} };
    }
    if (d.scope !== undefined && d.scope !== "once" && d.scope !== "run") {
      throw new SteadError("STEAD_BAD_OPTION", `unknown scope ${JSON.stringify(d.scope)}`, { runId, fix: 'use "once" (default) or "run"' });
    }
    if (!approved && (d.input !== undefined || d.scope === "run")) {
      throw new SteadError("STEAD_BAD_OPTION", `a denial of "${name}" cannot carry edited arguments or scope "run"`, { runId, fix: "deny with --reason only" });
    }
    if (d.input !== undefined) {
      const validate = compileJsonSchema(tool.inputSchema);
      if (!validate(d.input)) {
        throw new SteadError("STEAD_SCHEMA_MISMATCH", `the edited arguments for ${tool.tool} do not match its input schema: ${describe(validate.errors)}; the call still waits for a decision`, {
          runId,
          wait: name,
          fix: `fix the JSON and decide again (see the call with \`stead why ${runId}\`)`,
        });
      }
    }
    return {
      recorded: { ...(d.input !== undefined ? { input: d.input } : {}), ...(d.scope ? { scope: d.scope } : {}), fingerprint: tool.fingerprint },
      event: { ...(d.input !== undefined ? { edited: true } : {}), ...(d.scope ? { scope: d.scope } : {}) },
    };
  },
  same(recorded, fields) {
    const d = fields as ToolDecisionOptions;
    return sameArgs(recorded.input, d.input) && (recorded.scope ?? "once") === (d.scope ?? "once");
  },
  describe(recorded) {
    return recorded.approved === true ? (recorded.input !== undefined ? "approved with edited arguments" : "approved") : "denied";
  },
};

function toolRequest(request: string | null): { tool: string; fingerprint: string; inputSchema: object } | null {
  let req: unknown;
  try {
    req = request ? JSON.parse(request) : null;
  } catch {
    return null;
  }
  if (typeof req !== "object" || req === null) return null;
  const r = req as Record<string, unknown>;
  if (typeof r.tool !== "string" || typeof r.fingerprint !== "string" || typeof r.inputSchema !== "object" || r.inputSchema === null) return null;
  return { tool: r.tool, fingerprint: r.fingerprint, inputSchema: r.inputSchema };
}

function describe(errors: ErrorObject[] | null | undefined): string {
  if (!errors?.length) return "invalid";
  return errors
    .slice(0, 5)
    .map((e) => `${e.instancePath || "(root)"} ${e.message ?? "is invalid"}${e.keyword === "additionalProperties" ? ` (${String((e.params as { additionalProperty?: unknown }).additionalProperty)})` : ""}`)
    .join("; ");
}
