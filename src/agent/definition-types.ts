import type { LanguageModelV3 } from "@ai-sdk/provider";
import type { Recovery, WorkflowDefinition } from "../engine/context-types.js";
import type { AnyTool } from "./tool.js";

/*
 * The shapes of an agent definition, apart from agent() that makes one: the loop's files read
 * them, and agent() imports the loop, so they live where both import without a cycle.
 */

export interface AgentInitContext {
  runId: string;
  recovery: Recovery;
  signal: AbortSignal;
  /** The run's workspace directory, already brought to its last completed step; null without one. */
  workspace: string | null;
}

export interface AgentConfig {
  /** An AI SDK language model, or several in failover order. */
  model: LanguageModelV3 | readonly LanguageModelV3[];
  instructions?: string;
  tools?: Record<string, AnyTool>;
  /** Model calls per run (each call and the tool calls it asks for is one loop turn). Default 20. */
  maxTurns?: number;
  /** Journaled model and tool calls per run. Default 200. */
  maxSteps?: number;
  /** Input plus output tokens per run, as the provider reports them. Default: no budget. */
  tokenBudget?: number;
  /** A session turn cut off by a crash: "resume" (default) continues it; "interrupt" ends it as interrupted. */
  onInterrupt?: "resume" | "interrupt";
  /**
   * Called once per process that executes a run, before the loop (reconnect external resources
   * here). Like a step, it starts only on a lease known to be held: a worker that wakes from a
   * freeze to find its run taken over does not call it.
   */
  init?: (ctx: AgentInitContext) => Promise<void> | void;
  /** Transient provider failures (network, 5xx, 529) per model call: tries and backoff. */
  retry?: { attempts?: number; baseMs?: number; maxMs?: number };
  /** A stream silent for this long is cut and retried as a transient failure. Default 60 000 ms. */
  idleTimeoutMs?: number;
  temperature?: number;
  maxOutputTokens?: number;
}

export type AgentInput = string | { prompt: string };

export interface AgentOutput {
  text: string;
  finishReason: string;
  modelCalls: number;
  toolCalls: number;
  usage: { inputTokens: number; outputTokens: number };
}

export interface AgentDefinition extends WorkflowDefinition<AgentInput, AgentOutput> {
  readonly kind: "agent";
  readonly config: Readonly<AgentConfig>;
  readonly models: readonly LanguageModelV3[];
}
