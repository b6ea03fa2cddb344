/**
 * A worker stopped by force (its grace period ran out, or abortAll) ends its executions without
 * writing: the abort its model calls and tools see must not be journaled as their outcome, or the
 * replacement worker would replay "aborted" as a failed model call or a tool error.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { agent, tool } from "../src/index.js";
import { providerModel, reply } from "./helpers/provider-server.js";
import { waitUntil } from "./helpers/waiting.js";
import { CUT_LEASE_MS, FAST_RETRY, agentTestKit, hasStep, hasToolResults, toolResult } from "./fixtures/agents/kit.js";

const { h, server } = agentTestKit();

describe("a forced stop is not an outcome", () => {
  it("a model call streaming when the grace period runs out is made again by the next worker, not replayed as failed", async () => {
    let first = true;
    const s = await server(() => {
      if (!first) return reply.text("the answer");
      first = false;
      return reply.text("never finishes", { chunks: 2, hangAfterChunks: 1 });
    });
    const def = agent("slow-talker", { model: providerModel(s.url), retry: FAST_RETRY });
    const stead = h.create();
    const { id } = await stead.runs.start(def, "hello");
    const doomed = h.worker(stead, { definitions: [def], leaseMs: CUT_LEASE_MS }).start();
    await waitUntil("the first model request", () => Promise.resolve(s.requests.length === 1));
    await waitUntil("model-1's intent", async () => hasStep("model-1", "intent")(await stead.store.journal(id)));
    await doomed.stop({ graceMs: 20 });

    h.worker(stead, { definitions: [def], leaseMs: CUT_LEASE_MS }).start();
    const run = await stead.runs.waitFor(id, { timeoutMs: 20_000 });
    expect(run.error).toBeNull();
    expect(run.status).toBe("completed");
    expect(run.output).toMatchObject({ text: "the answer" });
  });

  it("a tool that honours ctx.signal and throws on the abort: the error is not journaled, the tool runs again", async () => {
    const s = await server((req) => (hasToolResults(req) ? reply.text("done") : reply.toolCalls([{ id: "c1", name: "wait", args: {} }])));
    const runs: number[] = [];
    const def = agent("waiter", {
      model: providerModel(s.url),
      retry: FAST_RETRY,
      tools: {
        wait: tool({
          input: z.object({}),
          idempotent: true,
          run: (_i, ctx) => {
            runs.push(ctx.attempt);
            if (runs.length > 1) return "waited";
            return new Promise<string>((_, reject) => ctx.signal.addEventListener("abort", () => reject(new Error("stopped waiting")), { once: true }));
          },
        }),
      },
    });
    const stead = h.create();
    const { id } = await stead.runs.start(def, "wait for it");
    const doomed = h.worker(stead, { definitions: [def], leaseMs: CUT_LEASE_MS }).start();
    await waitUntil("the tool to run", () => Promise.resolve(runs.length === 1));
    doomed.abortAll();

    h.worker(stead, { definitions: [def], leaseMs: CUT_LEASE_MS }).start();
    const run = await stead.runs.waitFor(id, { timeoutMs: 20_000 });
    expect(run.status).toBe("completed");
    expect(runs).toHaveLength(2);
    expect(toolResult(s.requests.find(hasToolResults), "c1")).toBe("waited");
  });
});
