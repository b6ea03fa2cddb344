import type { LanguageModelV3Message } from "@ai-sdk/provider";
import { StepFailedError } from "../errors.js";
import { decodeError, decodePayload } from "../engine/payload.js";
import type { RunRow, StepRow } from "../store/types.js";
import { UNREDACTED_STREAM } from "../redaction/stream-redactor.js";
import type { AgentDefinition, AgentInput } from "./definition-types.js";
import { JournalEnd, type LoopDriver } from "./driver.js";
import { agentLoop, closeTranscript, newTranscript } from "./loop.js";
import { promptOf } from "./prompt.js";

/**
 * The transcript of a session's earlier turns, rebuilt from their journals by running the loop
 * on recorded outcomes only (nothing executes). Each turn stores only its own model responses and
 * tool results, so storage grows with turns, never with turns × transcript.
 */
export async function turnHistory(def: AgentDefinition, turns: { run: RunRow; journal: StepRow[] }[]): Promise<LanguageModelV3Message[]> {
  const messages: LanguageModelV3Message[] = [];
  for (const { run, journal } of turns) messages.push(...(await turnTranscript(def, run, journal, messages)));
  return messages;
}

/** One turn's messages (its prompt, the model's answers, tool results), however the turn ended. */
export async function turnTranscript(def: AgentDefinition, run: RunRow, journal: StepRow[], before: LanguageModelV3Message[] = []): Promise<LanguageModelV3Message[]> {
  let prompt: string;
  try {
    prompt = promptOf(def, run.id, decodePayload<AgentInput>(run.input));
  } catch {
    return [];
  }
  const transcript = newTranscript();
  try {
    await agentLoop(def, historyDriver(run, journal), prompt, before, transcript);
  } catch {
    // The turn failed (a step's recorded failure, a limit) or was cut off (JournalEnd): keep what
    // it got to, closed so every tool call has a result.
  }
  return closeTranscript(transcript);
}

function historyDriver(run: RunRow, journal: StepRow[]): LoopDriver {
  const byId = new Map(journal.map((s) => [s.stepId, s]));
  const recorded = <T>(id: string): T => {
    const s = byId.get(id);
    if (!s || (s.status !== "completed" && s.status !== "failed")) throw new JournalEnd(id);
    // A failed step, or a completed one whose error is its outcome (a tool's error): the same error again.
    if (s.status === "failed" || s.error !== null) {
      const rec = decodeError(s.error);
      throw new StepFailedError(run.id, id, rec.message, rec.name, rec.code);
    }
    return decodePayload<T>(s.output);
  };
  return {
    runId: run.id,
    recovery: { kind: "initial" },
    signal: new AbortController().signal,
    live: false,
    payloadLimit: Infinity,
    errorOutcomes: true,
    workspace: run.workspace,
    step: <T>(id: string) => Promise.resolve().then(() => recorded<T>(id)),
    approval: (name) => Promise.resolve().then(() => recorded<unknown>(name)),
    quotaPark: (id) => Promise.resolve().then(() => void recorded<unknown>(id)),
    emit: () => Promise.resolve(),
    redactStream: () => UNREDACTED_STREAM,
    leaseHeld: () => Promise.resolve(),
    recorded: (id) => {
      const s = byId.get(id);
      return s !== undefined && (s.status === "completed" || s.status === "failed");
    },
  };
}
