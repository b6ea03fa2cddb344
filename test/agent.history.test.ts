/**
 * A session's earlier turns are read back as they were recorded, whatever the agent has become
 * since: a session takes a new definition at a turn boundary, and the model must still see what
 * happened before it (tool results, answers), not what the new rules would have done.
 */
import { expect, it } from "vitest";
import { z } from "zod";
import { agent, tool, type AgentConfig } from "../src/index.js";
import { providerModel, reply, type RecordedRequest } from "./helpers/provider-server.js";
import { FAST_RETRY, agentTestKit, contentText, lastUser } from "./fixtures/agents/kit.js";

const { h, server } = agentTestKit();

function chat(url: string, over: Partial<AgentConfig> = {}) {
  return agent("chat", {
    model: providerModel(url),
    retry: FAST_RETRY,
    tools: { lookup: tool({ input: z.object({ q: z.string() }), idempotent: true, run: ({ q }) => `found ${q}` }) },
    ...over,
  });
}

it("turn 2 sees turn 1's tool result and answer after the tool became approval-only and the turn limit dropped", async () => {
  const s = await server((req: RecordedRequest) => {
    const last = req.messages[req.messages.length - 1];
    if (last?.role === "tool") return reply.text(`ANSWER with ${contentText(last)}`);
    if (lastUser(req) === "first") return reply.toolCalls([{ id: "call_1", name: "lookup", args: { q: "orders" } }]);
    return reply.text("second answer");
  });
  const stead = h.create();
  const v1 = chat(s.url);
  const first = await stead.session(v1, "s1").send("first");
  h.worker(stead, { definitions: [v1] }).start();
  expect((await stead.runs.waitFor(first.runId, { timeoutMs: 20_000 })).status).toBe("completed");

  // The same agent, later: lookup now needs a person, and one model call per run is the limit.
  const v2 = chat(s.url, {
    maxTurns: 1,
    tools: { lookup: tool({ input: z.object({ q: z.string() }), needsApproval: true, run: ({ q }) => `found ${q}` }) },
  });
  const second = await stead.session(v2, "s1").send("second");
  h.worker(stead, { definitions: [v2] }).start();
  const run = await stead.runs.waitFor(second.runId, { timeoutMs: 20_000 });
  expect(run.status, JSON.stringify(run.error)).toBe("completed");

  const req = s.requests.find((r) => lastUser(r) === "second");
  const seen = JSON.stringify(req?.messages);
  expect(seen).toContain("found orders");
  expect(seen).toContain("ANSWER with found orders");
  expect(seen).not.toContain("interrupted: outcome unknown");
});
