/**
 * A tool's error is its step's *outcome*, not a value in its output: the journal row is a completed
 * step with the error and no output (read from the database), the model is told the error, and a
 * replay tells it the same. A result over the payload ceiling is decided in one place (the step's
 * store) and reaches the model the same way; a tool value that merely looks like an error stays a value.
 */
import type { LanguageModelV3Prompt } from "@ai-sdk/provider";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { agent, scriptedModel, tool, toolResults } from "../src/index.js";
import { onStore, STORE_KINDS, type OnStore } from "./helpers/both-stores.js";
import { FAST_FOLLOW } from "./helpers/temp-store.js";

const LIMIT = 4_096;

function toolAgent(name: string, run: () => unknown, prompts: LanguageModelV3Prompt[]) {
  return agent(name, {
    model: scriptedModel({
      respond: (prompt) => {
        prompts.push(prompt);
        return toolResults(prompt).length === 0 ? { toolCalls: [{ name: "fetch", input: { q: "x" } }] } : { text: "done" };
      },
    }),
    tools: { fetch: tool({ input: z.object({ q: z.string() }), idempotent: true, run }) },
  });
}

function lastToolOutputs(prompts: LanguageModelV3Prompt[]): unknown[] {
  return (prompts.at(-1) ?? []).flatMap((m) => (m.role === "tool" ? m.content.map((c) => (c.type === "tool-result" ? c.output : c)) : []));
}

describe.each(STORE_KINDS)("a tool's error as its step's outcome on %s", (kind) => {
  let s: OnStore | undefined;
  afterEach(async () => {
    await s?.cleanup();
    s = undefined;
  });

  async function toolRow(runId: string): Promise<Record<string, unknown> | undefined> {
    return (await s?.rows("SELECT status, output, error FROM steps WHERE run_id = ? AND kind = 'tool'", runId))?.[0];
  }

  it("journals a thrown error as a completed step with the error and no output; the model is told it, live and on replay", async () => {
    s = await onStore(kind, "tool-error-outcome");
    const prompts: LanguageModelV3Prompt[] = [];
    const def = toolAgent("thrower", () => {
      throw new Error("the index is offline");
    }, prompts);
    const run = await s.stead.run(def, "go", FAST_FOLLOW);
    expect(run.status).toBe("completed");
    const row = await toolRow(run.id);
    expect(row).toMatchObject({ status: "completed", output: null });
    expect(JSON.parse(String(row?.error))).toMatchObject({ code: "STEAD_ERROR_OUTCOME", message: "the index is offline" });
    expect(lastToolOutputs(prompts)).toEqual([{ type: "error-text", value: "the index is offline" }]);

    // A fork replays the journal through the tool step and asks the model again: it is told the same error.
    const replayed: LanguageModelV3Prompt[] = [];
    const again = toolAgent("thrower", () => "never called", replayed);
    const fork = await s.stead.runs.fork(run.id, { at: "tool:call_0_0" });
    expect((await s.stead.runs.follow(fork.id ?? "", [again], FAST_FOLLOW)).status).toBe("completed");
    expect(lastToolOutputs(replayed)).toEqual([{ type: "error-text", value: "the index is offline" }]);
  });

  it("tells the model a result over the payload ceiling is too large, recorded as the step's error outcome", async () => {
    s = await onStore(kind, "tool-error-oversize", { payloadLimitBytes: LIMIT });
    const prompts: LanguageModelV3Prompt[] = [];
    const run = await s.stead.run(toolAgent("big", () => "x".repeat(LIMIT * 2), prompts), "go", FAST_FOLLOW);
    expect(run.status).toBe("completed");
    const row = await toolRow(run.id);
    expect(row).toMatchObject({ status: "completed", output: null });
    const told = `the result of fetch is ${LIMIT * 2 + 2} bytes, over the ${LIMIT}-byte ceiling; ask for less (a range, a summary)`;
    expect(JSON.parse(String(row?.error))).toMatchObject({ code: "STEAD_ERROR_OUTCOME", message: told });
    expect(lastToolOutputs(prompts)).toEqual([{ type: "error-text", value: told }]);
  });

  it("keeps a returned value as the step's output", async () => {
    s = await onStore(kind, "tool-value");
    const prompts: LanguageModelV3Prompt[] = [];
    const run = await s.stead.run(toolAgent("valued", () => ({ rows: 3 }), prompts), "go", FAST_FOLLOW);
    expect(await toolRow(run.id)).toMatchObject({ status: "completed", output: '{"rows":3}', error: null });
    expect(lastToolOutputs(prompts)).toEqual([{ type: "json", value: { rows: 3 } }]);
  });
});
