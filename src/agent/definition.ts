import { createHash } from "node:crypto";
import type { LanguageModelV3 } from "@ai-sdk/provider";
import { SteadError } from "../errors.js";
import { DEFINITION, DEFINITION_NAME, callerModule } from "../engine/definitions/definition.js";
import { portedDefinition } from "../engine/port.js";
import type { AgentConfig, AgentDefinition, AgentInput, AgentOutput } from "./definition-types.js";
import { AGENT_INPUT } from "./prompt.js";

/** Bumped when the loop's journal layout changes: runs recorded under another version are held `definition_changed`. */
export const LOOP_VERSION = "agent-loop/1";

export function agent(name: string, config: AgentConfig): AgentDefinition {
  if (typeof name !== "string" || !DEFINITION_NAME.test(name)) {
    throw new SteadError("STEAD_INVALID_DEFINITION", `invalid agent name ${JSON.stringify(name)}`, {
      fix: "use 1-128 characters: letters, digits, '_', '.', ':' or '-', starting with a letter or digit",
    });
  }
  const models = checkModels(name, config?.model);
  for (const [toolName, t] of Object.entries(config.tools ?? {})) {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(toolName) || typeof t?.run !== "function" || !t.jsonSchema) {
      throw new SteadError("STEAD_INVALID_DEFINITION", `agent ${name}: tool "${toolName}" is not a tool() with a name of 1-64 letters, digits, '_' or '-'`, {
        fix: "tools: { readFile: tool({ input: z.object({ path: z.string() }), run: ... }) }",
      });
    }
  }
  for (const k of ["maxTurns", "maxSteps", "tokenBudget"] as const) {
    const v = config[k];
    if (v !== undefined && (!Number.isInteger(v) || v < 1)) {
      throw new SteadError("STEAD_INVALID_DEFINITION", `agent ${name}: ${k} must be a positive integer, got ${String(v)}`, { fix: `omit ${k} for the default` });
    }
  }
  const module = callerModule(agent);
  let fp: string | undefined;
  const def: AgentDefinition = portedDefinition<AgentInput, AgentOutput, AgentDefinition>(
    {
      [DEFINITION]: true,
      kind: "agent",
      name,
      module,
      config,
      models,
      onInterrupt: config.onInterrupt ?? "resume",
      input: AGENT_INPUT,
      fingerprint() {
        fp ??= agentFingerprint(models, config);
        return fp;
      },
    },
    // The loop and the model plumbing are loaded by the first agent run, not by requiring the package.
    async (ctx, input, port) => (await import("./run.js")).runAgent(def, ctx, input, port),
    () =>
      new SteadError("STEAD_INVALID_DEFINITION", `agent ${name} runs only as a run of its own: its function cannot be called directly`, {
        fix: `run it with ctx.agent("<id>", ${name}, input) inside a workflow, stead.runs.start(${name}, input) or a session`,
      }),
  );
  return def;
}

/** Model ids, instructions, tool names and input schemas, and the loop version: what a journal depends on. */
function agentFingerprint(models: readonly LanguageModelV3[], config: AgentConfig): string {
  const facts = {
    loop: LOOP_VERSION,
    models: models.map((m) => `${m.provider}:${m.modelId}`),
    instructions: config.instructions ?? "",
    tools: Object.entries(config.tools ?? {})
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([n, t]) => [n, t.jsonSchema]),
  };
  return "agent:" + createHash("sha256").update(JSON.stringify(facts)).digest("hex").slice(0, 16);
}

function checkModels(name: string, model: unknown): LanguageModelV3[] {
  const list = Array.isArray(model) ? (model as unknown[]) : [model];
  if (list.length === 0) throw new SteadError("STEAD_INVALID_DEFINITION", `agent ${name} has no model`, { fix: "pass model: a language model, or a list in failover order" });
  return list.map((m, i) => {
    if (typeof m === "string") {
      throw new SteadError("STEAD_INVALID_DEFINITION", `agent ${name}: model ${JSON.stringify(m)} is a string id; Stead needs a model object`, {
        fix: 'create it with a provider package, e.g. createOpenAICompatible({ ... }).chatModel("model-id") or openai("gpt-4o")',
      });
    }
    const o = m as Partial<LanguageModelV3> | null;
    if (!o || typeof o !== "object" || typeof o.doStream !== "function" || typeof o.modelId !== "string") {
      throw new SteadError("STEAD_INVALID_DEFINITION", `agent ${name}: model #${i + 1} is not an AI SDK language model`, {
        fix: "pass a LanguageModel from an AI SDK provider package (specification v3)",
      });
    }
    if (o.specificationVersion !== "v3") {
      throw new SteadError("STEAD_INVALID_DEFINITION", `agent ${name}: model ${o.modelId} implements specification ${String(o.specificationVersion)}, Stead needs v3`, {
        fix: "upgrade the provider package to a version for ai@6 (@ai-sdk/provider@3)",
      });
    }
    return o as LanguageModelV3;
  });
}
