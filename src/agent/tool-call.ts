import { errorMessage } from "../errors.js";
import type { ReconcileResult } from "../engine/context-types.js";
import { ERROR_OUTCOME, OUTCOME_UNKNOWN } from "../engine/runs/holds.js";
import { callFingerprint, type ToolApprovalRequest, type ToolDecision } from "./approvals.js";
import type { AgentDefinition } from "./definition-types.js";
import type { LoopDriver } from "./driver.js";
import { schemaLib } from "./schema-lib.js";
import { INTERRUPTED_RESULT, errorOutput, valueOutput, type ResponsePart, type ToolResult } from "./messages.js";
import type { AnyTool, ToolContext } from "./tool.js";

type Call = Extract<ResponsePart, { type: "tool-call" }>;

/**
 * A tool step's journaled output is the tool's value itself (so a result a person supplies when
 * releasing an ambiguous call, or a reconciled one, reads the same). An error the model should see
 * is the step's error outcome (a completed step with an error: EngineStepOptions.errorOutcome).
 * Journals written before that hold it as this marker in the output instead: read for ever.
 */
const TOOL_ERROR = "$steadToolError";

/** The message of a tool error journaled as the old marker (see TOOL_ERROR); undefined for a tool value. */
export function asToolError(v: unknown): string | undefined {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
  const m = (v as Record<string, unknown>)[TOOL_ERROR];
  return typeof m === "string" ? m : undefined;
}

export interface ToolState {
  /** Tools a person approved for the rest of the run (rebuilt on replay from the journaled decisions). */
  approvedForRun: Set<string>;
  toolSteps: number;
  /** Tool-call ids seen in this run: some providers repeat ids across responses. */
  seenIds: Set<string>;
}

/** A run-unique key for a call: its id, qualified by the model call's number if the id was seen before. */
export function callKey(state: ToolState, toolCallId: string, modelCall: number): string {
  let key = toolCallId;
  if (state.seenIds.has(key)) key = `${toolCallId}@${modelCall}`;
  for (let n = 2; state.seenIds.has(key); n++) key = `${toolCallId}@${modelCall}.${n}`;
  state.seenIds.add(key);
  return key;
}

/**
 * One tool call of a model response. The model always gets a well-formed result: unknown tools,
 * invalid arguments, denials, tool errors and skipped ambiguous calls all become tool results.
 * Only a tool error the tool marks fatal (or a store/lease failure) ends the loop.
 */
export async function callTool(def: AgentDefinition, driver: LoopDriver, call: Call, key: string, state: ToolState, beforeStep: () => void): Promise<ToolResult> {
  const result = (output: ToolResult["output"]): ToolResult => ({ toolCallId: call.toolCallId, toolName: call.toolName, output });
  if (!driver.live) {
    const replayed = await fromJournal(driver, call, key, result);
    if (replayed) return replayed;
  }
  const tools = def.config.tools ?? {};
  const t: AnyTool | undefined = Object.prototype.hasOwnProperty.call(tools, call.toolName) ? tools[call.toolName] : undefined;
  if (!t) {
    const names = Object.keys(tools);
    return result(errorOutput(`unknown tool "${call.toolName}"; the tools are: ${names.length ? names.join(", ") : "(none)"}`));
  }
  let input: unknown;
  try {
    input = JSON.parse(call.input || "{}");
  } catch (e) {
    return result(errorOutput(`the arguments of ${call.toolName} are not valid JSON (${errorMessage(e)}); send a JSON object matching its schema`));
  }
  const { safeValidateTypes } = schemaLib();
  const checked = await safeValidateTypes({ value: input, schema: t.schema });
  if (!checked.success) return result(errorOutput(`invalid arguments for ${call.toolName}: ${errorMessage(checked.error)}`));
  input = checked.value;

  const needs = typeof t.needsApproval === "function" ? t.needsApproval(input, { runId: driver.runId, toolCallId: call.toolCallId }) : t.needsApproval === true;
  if (needs && !state.approvedForRun.has(call.toolName)) {
    const decision = await decide(driver, call, key, t, input);
    if (!decision.approved) {
      return result({ type: "execution-denied", reason: `denied${decision.by ? ` by ${decision.by}` : ""}${decision.reason ? `: ${decision.reason}` : ""}` });
    }
    if (decision.input !== undefined) {
      // Validated once, when decided (against the JSON Schema the wait recorded: tool-decisions.ts);
      // this is the tool's own parse (defaults, transforms), which fails only on a rule JSON
      // Schema cannot say (a refinement): the model is told, as for its own arguments.
      const edited = await safeValidateTypes({ value: decision.input, schema: t.schema });
      if (!edited.success) return result(errorOutput(`the arguments a person edited for ${call.toolName} are invalid: ${errorMessage(edited.error)}`));
      input = edited.value;
    }
    if (decision.scope === "run") state.approvedForRun.add(call.toolName);
  }

  beforeStep();
  state.toolSteps++;
  const stepId = `tool:${key}`;
  const ctxFor = (info: { attempt: number }): ToolContext => ({
    runId: driver.runId,
    toolName: call.toolName,
    toolCallId: call.toolCallId,
    idempotencyKey: `${driver.runId}:${stepId}`,
    attempt: info.attempt,
    recovery: driver.recovery,
    signal: driver.signal,
    workspace: driver.workspace,
  });
  const reconcile = t.reconcile;
  try {
    const out = await driver.step<unknown>(
      stepId,
      {
        kind: "tool",
        ...(t.idempotent ? {} : { effect: true }),
        ...(reconcile
          ? {
              reconcile: (info): Promise<ReconcileResult<unknown>> | ReconcileResult<unknown> =>
                reconcile({ toolName: call.toolName, toolCallId: call.toolCallId, input }, ctxFor(info)),
            }
          : {}),
        ...(driver.errorOutcomes ? { errorOutcome: (e: unknown, where: "function" | "storing") => errorOutcomeOf(t, call, driver.payloadLimit, e, where) } : {}),
      },
      // An engine from before error outcomes: the tool's error is caught here and journaled as the old marker.
      driver.errorOutcomes ? (info) => t.run(input, ctxFor(info)) as unknown : (info) => markedRun(t, call, driver, input, ctxFor(info)),
    );
    return result(journaled(out));
  } catch (e) {
    return result(failedCall(e));
  }
}

/** A tool step's value as the model's result: a value, or an error journaled as the old marker. */
function journaled(out: unknown): ToolResult["output"] {
  const failed = asToolError(out);
  return failed === undefined ? valueOutput(out) : errorOutput(failed);
}

/**
 * What the model is told when a tool step fails, or undefined to fail the step: a value too large
 * to store (too deep or not JSON is the tool's own bug), or an error the tool does not mark fatal.
 */
function errorOutcomeOf(t: AnyTool, call: Call, limit: number, e: unknown, where: "function" | "storing"): string | undefined {
  if (where === "storing") {
    if (codeOf(e) !== "STEAD_PAYLOAD_TOO_LARGE") return undefined;
    const bytes = (e as { details?: { bytes?: unknown } }).details?.bytes;
    return `the result of ${call.toolName} is ${String(bytes)} bytes, over the ${limit}-byte ceiling; ask for less (a range, a summary)`;
  }
  const fatal = typeof t.fatal === "function" ? t.fatal(e) : t.fatal === true;
  return fatal ? undefined : errorMessage(e);
}

/** A tool run on an engine from before error outcomes: its error (or a value over the ceiling) as the old marker. */
async function markedRun(t: AnyTool, call: Call, driver: LoopDriver, input: unknown, ctx: ToolContext): Promise<unknown> {
  try {
    const value = (await t.run(input, ctx)) as unknown;
    let bytes = 0;
    try {
      bytes = Buffer.byteLength(JSON.stringify(value) ?? "null");
    } catch {
      // Not JSON: the engine's encoding fails the step, as it always did.
    }
    if (bytes > driver.payloadLimit) return { [TOOL_ERROR]: `the result of ${call.toolName} is ${bytes} bytes, over the ${driver.payloadLimit}-byte ceiling; ask for less (a range, a summary)` };
    return value;
  } catch (e) {
    // The execution ended under the tool: its abort is not the tool's outcome (the engine drops it).
    if (driver.signal.aborted) throw e;
    const fatal = typeof t.fatal === "function" ? t.fatal(e) : t.fatal === true;
    if (fatal) throw e;
    return { [TOOL_ERROR]: errorMessage(e) };
  }
}

/** A thrown value's Stead code, by its field: the engine may be another copy of this package (its classes are not ours). */
function codeOf(e: unknown): unknown {
  return typeof e === "object" && e !== null ? (e as { code?: unknown }).code : undefined;
}

/** A tool step that threw: its error outcome, or an ambiguous call skipped by a person, is the model's result; anything else ends the loop. */
function failedCall(e: unknown): ToolResult["output"] {
  if (codeOf(e) === ERROR_OUTCOME.code) return errorOutput(errorMessage(e));
  if (codeOf(e) === OUTCOME_UNKNOWN.code) return errorOutput(INTERRUPTED_RESULT);
  throw e;
}

/**
 * An earlier turn's call, read back as it was recorded: the agent's tools, schemas or approval
 * rules may have changed since (a session takes a new definition at a turn boundary), and the
 * history must be what the model saw then. Undefined: nothing recorded (derive as a live run would).
 */
async function fromJournal(driver: LoopDriver, call: Call, key: string, result: (o: ToolResult["output"]) => ToolResult): Promise<ToolResult | undefined> {
  const stepId = `tool:${key}`;
  if (driver.recorded?.(stepId)) {
    try {
      return result(journaled(await driver.step<unknown>(stepId, { kind: "tool" }, () => undefined)));
    } catch (e) {
      return result(failedCall(e));
    }
  }
  const wait = `approve:${key}`;
  if (driver.recorded?.(wait)) {
    const d = (await driver.approval(wait, null)) as ToolDecision;
    if (!d.approved) return result({ type: "execution-denied", reason: `denied${d.by ? ` by ${d.by}` : ""}${d.reason ? `: ${d.reason}` : ""}` });
  }
  return undefined;
}

async function decide(driver: LoopDriver, call: Call, key: string, t: AnyTool, input: unknown): Promise<ToolDecision> {
  const fingerprint = callFingerprint(call.toolName, input);
  for (let round = 1; ; round++) {
    const name = round === 1 ? `approve:${key}` : `approve:${key}.${round}`;
    const request: ToolApprovalRequest = { tool: call.toolName, toolCallId: call.toolCallId, input, fingerprint, inputSchema: t.jsonSchema };
    const d = (await driver.approval(name, request)) as ToolDecision;
    // A decision made for another call (a resumed model asked differently) does not carry over.
    if (d.fingerprint === undefined || d.fingerprint === fingerprint) return d;
    await driver.emit([{ type: "approval.stale", data: { wait: name, decided: d.fingerprint, call: fingerprint } }]);
  }
}
