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

  it("fails the step, with its outcome journaled, when the tool's own fatal() throws", async () => {
    s = await onStore(kind, "tool-fatal-throws");
    const prompts: LanguageModelV3Prompt[] = [];
    const def = agent("fatal-throws", {
      model: scriptedModel({ respond: (p) => (prompts.push(p), toolResults(p).length === 0 ? { toolCalls: [{ name: "send", input: { q: "x" } }] } : { text: "done" }) }),
      tools: {
        send: tool({
          input: z.object({ q: z.string() }),
          fatal: () => {
            throw new Error("fatal() itself broke");
          },
          run: () => {
            throw new Error("send failed");
          },
        }),
      },
    });
    const run = await s.stead.run(def, "go", FAST_FOLLOW);
    expect(run.status).toBe("failed");
    const row = await toolRow(run.id);
    expect(row).toMatchObject({ status: "failed" });
    expect(JSON.parse(String(row?.error))).toMatchObject({ message: "fatal() itself broke" });
  });

  it("cuts an error outcome's message to the payload ceiling", async () => {
    s = await onStore(kind, "tool-error-long", { payloadLimitBytes: LIMIT });
    const prompts: LanguageModelV3Prompt[] = [];
    const run = await s.stead.run(
      toolAgent("long-error", () => {
        throw new Error("x".repeat(LIMIT * 3));
      }, prompts),
      "go",
      FAST_FOLLOW,
    );
    expect(run.status).toBe("completed");
    const error = String((await toolRow(run.id))?.error);
    expect(Buffer.byteLength(error)).toBeLessThanOrEqual(LIMIT);
    expect(JSON.parse(error)).toMatchObject({ code: "STEAD_ERROR_OUTCOME", message: expect.stringContaining(`cut to the ${LIMIT}-byte payload ceiling`) as string });
  });

  it("tells a session's next turn of an earlier tool error as the model saw it live", async () => {
    s = await onStore(kind, "tool-error-history");
    const prompts: LanguageModelV3Prompt[] = [];
    const def = agent("chat-errors", {
      model: scriptedModel({
        respond: (p) => {
          prompts.push(p);
          const last = p.at(-1);
          const firstTurn = JSON.stringify(p).includes('"first"') && !JSON.stringify(p).includes('"second"');
          return firstTurn && last?.role === "user" ? { toolCalls: [{ name: "fetch", input: { q: "x" } }] } : { text: "ok" };
        },
      }),
      tools: {
        fetch: tool({
          input: z.object({ q: z.string() }),
          idempotent: true,
          run: () => {
            throw new Error("the index is offline");
          },
        }),
      },
    });
    const session = s.stead.session(def, "sess-errors");
    const worker = s.stead.worker({ definitions: [def] });
    worker.start();
    try {
      const a = await session.send("first");
      expect((await s.stead.runs.waitFor(a.runId, { timeoutMs: 20_000 })).status).toBe("completed");
      const live = lastToolOutputs(prompts);
      expect(live).toEqual([{ type: "error-text", value: "the index is offline" }]);
      const b = await session.send("second");
      expect((await s.stead.runs.waitFor(b.runId, { timeoutMs: 20_000 })).status).toBe("completed");
      expect(lastToolOutputs(prompts)).toEqual(live);
    } finally {
      await worker.stop();
    }
  });

  it("keeps a returned value as the step's output", async () => {
    s = await onStore(kind, "tool-value");
    const prompts: LanguageModelV3Prompt[] = [];
    const run = await s.stead.run(toolAgent("valued", () => ({ rows: 3 }), prompts), "go", FAST_FOLLOW);
    expect(await toolRow(run.id)).toMatchObject({ status: "completed", output: '{"rows":3}', error: null });
    expect(lastToolOutputs(prompts)).toEqual([{ type: "json", value: { rows: 3 } }]);
  });
});
