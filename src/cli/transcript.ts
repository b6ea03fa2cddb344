/** `stead sessions show`: a session's transcript as lines for a terminal. */
import type { ToolCallEntry, TranscriptEntry, TurnTranscript } from "../agent/transcript.js";
import { json, printable } from "./format.js";

/** Longest tool result or argument text printed; `--json` has the whole of it. */
const MAX_TEXT = 1_000;

function cut(s: string): string {
  return s.length <= MAX_TEXT ? s : `${s.slice(0, MAX_TEXT)}… (${s.length} characters; --json has all of it)`;
}

/** `prefix` then `text`, its later lines indented under the first. Control characters are shown, never sent to the terminal. */
function block(prefix: string, text: string): string[] {
  const [first = "", ...rest] = printable(text).split("\n");
  return [`${prefix}${first}`, ...rest.map((l) => `${" ".repeat(prefix.length)}${l}`)];
}

const valueText = (v: unknown) => (typeof v === "string" ? v : json(v));

function toolLines(e: ToolCallEntry, runId: string): string[] {
  const out = [`  tool call ${printable(e.tool)} ${printable(cut(valueText(e.args)))} (${printable(e.toolCallId)})`];
  const a = e.approval;
  if (a?.status === "approved") {
    const edited = a.editedArgs === undefined ? "" : `, with edited arguments ${printable(cut(json(a.editedArgs)))}`;
    out.push(`    approved${a.by ? ` by ${printable(a.by)}` : ""}${a.scope === "run" ? " (for every later call of the tool in this run)" : ""}${edited}${a.reason ? `: ${printable(a.reason)}` : ""}`);
  }
  const say = (label: string, text: string) => out.push(...block(`    ${label}`, cut(text)));
  switch (e.status) {
    case "result":
      say("result: ", valueText(e.result));
      break;
    case "error":
      say("error: ", e.message ?? "");
      break;
    case "denied":
    case "interrupted":
      say("", e.message ?? "");
      break;
    case "failed":
      say("failed, which ended the turn: ", e.message ?? "");
      break;
    case "running":
      out.push("    running");
      break;
    case "outcome-unknown":
      out.push(`    outcome unknown: the effect was dispatched and its process was lost (see \`stead why ${runId}\`)`);
      break;
    case "retry":
      out.push("    to be run again (a person chose retry)");
      break;
    case "waiting-approval":
      out.push(`    waiting for approval: stead approve ${runId} ${a?.step ?? ""}  or  stead deny ${runId} ${a?.step ?? ""} --reason "..."`);
      break;
    case "answered-without-running":
      out.push("    not run: an unknown tool, or arguments that are not valid (the model was told)");
      break;
    case "not-run":
      out.push("    not run yet");
      break;
  }
  return out;
}

function entryLines(e: TranscriptEntry, runId: string): string[] {
  switch (e.type) {
    case "user":
      return block("  user: ", e.text);
    case "model":
      // A response that only calls tools has no text: its calls follow.
      return e.text === "" ? [] : block("  model: ", e.text);
    case "model-call":
      if (e.status === "failed") return block(`  model call ${e.step} failed: `, e.message ?? "");
      if (e.status === "in-flight") return [`  model call ${e.step}: under way (attempt ${e.attempt})`];
      if (e.status === "retry") return [`  model call ${e.step}: to be made again`];
      return [`  model call ${e.step}: cut off (attempt ${e.attempt}); it is made again when the turn resumes`];
    case "quota":
      return [`  model ${printable(e.model)} out of quota: ${e.parked ? "parked" : "was parked"} until ${new Date(e.resetAt).toISOString()}`];
    case "tool-call":
      return toolLines(e, runId);
  }
}

function turnStatus(t: TurnTranscript): string {
  if (t.outcome) return t.outcome;
  return t.queued ? "queued" : t.status;
}

export function transcriptLines(sessionId: string, definition: string, turns: readonly TurnTranscript[], paint: (status: string) => string = (s) => s): string[] {
  const out = [`session ${printable(sessionId)} (${printable(definition)}): ${turns.length} turn${turns.length === 1 ? "" : "s"}`];
  for (const t of turns) {
    out.push(`turn ${t.turn}  ${paint(turnStatus(t))}  run ${t.runId}`);
    for (const e of t.entries) out.push(...entryLines(e, t.runId));
    // The error, unless an entry already said what ended the turn.
    const told = t.entries.some((e) => (e.type === "model-call" || e.type === "tool-call") && e.status === "failed");
    if (t.error && t.outcome !== "completed" && !told) out.push(...block("  error: ", `${t.error.code ? `${t.error.code}: ` : ""}${t.error.message}`));
  }
  return out;
}
