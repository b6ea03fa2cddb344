/**
 * An agent and the engine that runs it may come from different copies of the package (a CLI
 * loading a user's module) and so from different releases. Each side asks the other what it can
 * do: a tool's error reaches the model whichever side is older, and a tool approval stays one
 * (edited arguments accepted) when the agent's side is older. Read from the rows and the prompts.
 */
import type { LanguageModelV3Prompt } from "@ai-sdk/provider";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { agent, scriptedModel, tool, toolResults, type AgentDefinition } from "../src/index.js";
import type { EnginePort } from "../src/engine/port.js";
import { onStore, STORE_KINDS, type OnStore } from "./helpers/both-stores.js";
import { FAST_FOLLOW } from "./helpers/temp-store.js";

const PORTED = Symbol.for("stead.ported-body");
type Body = (ctx: unknown, input: unknown, port: EnginePort) => Promise<unknown>;

/** `def` run on a port changed by `skew`: an engine of another release, or another copy's classes. */
function skewed<D extends AgentDefinition>(def: D, skew: (port: EnginePort) => EnginePort): D {
  const body = (def as unknown as Record<symbol, Body>)[PORTED];
  if (!body) throw new Error("not a ported definition");
  return Object.assign(Object.create(Object.getPrototypeOf(def) as object) as D, def, { [PORTED]: (ctx: unknown, input: unknown, port: EnginePort) => body(ctx, input, skew(port)) });
}

/** A port as an engine from before error outcomes and tool approvals has it. */
const olderEngine = (port: EnginePort): EnginePort => {
  // Copied member by member: a port's members are its own properties, and these two are new.
  const older: Record<string, unknown> = { ...port };
  delete older.errorOutcomes;
  delete older.toolApproval;
  return older as unknown as EnginePort;
};

/** A port whose errors are another copy's: the same fields, not our classes. */
const otherCopy = (port: EnginePort): EnginePort => ({
  ...port,
  step: (id, options, fn) =>
    port.step(id, options, fn).catch((e: unknown) => {
      const f = e as { message: string; name: string; code?: unknown };
      throw Object.assign(new Error(f.message), { name: f.name, code: f.code });
    }),
});

function thrower(name: string, prompts: LanguageModelV3Prompt[]) {
  return agent(name, {
    model: scriptedModel({
      respond: (p) => {
        prompts.push(p);
        return toolResults(p).length === 0 ? { toolCalls: [{ name: "fetch", input: { q: "x" } }] } : { text: "done" };
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
}

const toolOutputs = (prompts: LanguageModelV3Prompt[]): unknown[] => (prompts.at(-1) ?? []).flatMap((m) => (m.role === "tool" ? m.content.map((c) => (c.type === "tool-result" ? c.output : c)) : []));

describe.each(STORE_KINDS)("an agent and an engine of different copies on %s", (kind) => {
  let s: OnStore | undefined;
  afterEach(async () => {
    await s?.cleanup();
    s = undefined;
  });

  it("on an older engine, a tool's error is journaled as the old marker and the model is told it", async () => {
    s = await onStore(kind, "skew-older-engine");
    const prompts: LanguageModelV3Prompt[] = [];
    const run = await s.stead.run(skewed(thrower("skew-a", prompts), olderEngine), "go", FAST_FOLLOW);
    expect(run.status).toBe("completed");
    expect(toolOutputs(prompts)).toEqual([{ type: "error-text", value: "the index is offline" }]);
    expect(await s.rows("SELECT status, output, error FROM steps WHERE run_id = ? AND kind = 'tool'", run.id)).toEqual([
      { status: "completed", output: '{"$steadToolError":"the index is offline"}', error: null },
    ]);
  });

  it("when the engine's errors are another copy's classes, a tool's error is still the model's to see", async () => {
    s = await onStore(kind, "skew-other-copy");
    const prompts: LanguageModelV3Prompt[] = [];
    const run = await s.stead.run(skewed(thrower("skew-b", prompts), otherCopy), "go", FAST_FOLLOW);
    expect(run.status).toBe("completed");
    expect(toolOutputs(prompts)).toEqual([{ type: "error-text", value: "the index is offline" }]);
  });

  it("an agent that asks for tool approvals through ctx.approval (an older agent) still gets a tool approval: edited arguments are accepted", async () => {
    s = await onStore(kind, "skew-older-agent");
    const sent: string[] = [];
    const def = agent("skew-c", {
      model: scriptedModel({ respond: (p) => (toolResults(p).length === 0 ? { toolCalls: [{ name: "send", input: { to: "a" } }] } : { text: "done" }) }),
      tools: { send: tool({ input: z.object({ to: z.string() }), needsApproval: true, run: ({ to }) => sent.push(to) }) },
    });
    const old = skewed(def, olderEngine);
    const run = await s.stead.run(old, "go", FAST_FOLLOW);
    expect(await s.rows("SELECT name, request_kind FROM waits WHERE run_id = ?", run.id)).toEqual([{ name: "approve:call_0_0", request_kind: null }]);
    expect((await s.stead.runs.waits(run.id))[0]).toMatchObject({ requestKind: "tool-call" });
    await s.stead.runs.approve(run.id, "approve:call_0_0", { input: { to: "b" } });
    expect((await s.stead.runs.follow(run.id, [old], FAST_FOLLOW)).status).toBe("completed");
    expect(sent).toEqual(["b"]);
  });
});
