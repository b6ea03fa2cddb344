/**
 * `stead sessions show <id>` through the real binary: a session's transcript read from the
 * journals (the agent is defined only in this test process, so the CLI cannot load its code):
 * turns in order with their status, the user's input, the model's text, tool calls with
 * arguments and results, denials, tool errors, "interrupted: outcome unknown", a failed, a
 * waiting, a queued and an interrupted turn.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { agent, tool, type AgentConfig, type Stead } from "../src/index.js";
import { cli, dumpStore, lines, requireBuild, tempDir } from "./cli-helpers.js";
import { providerModel, reply, startProviderServer, type ProviderServer, type RecordedRequest } from "./helpers/provider-server.js";
import { steadHarness } from "./helpers/temp-store.js";
import { waitUntil } from "./helpers/waiting.js";
import { CUT_LEASE_MS, FAST_RETRY, cutWhen, hasStep, lastUser } from "./fixtures/agents/kit.js";

beforeAll(() => requireBuild());

// One store for the whole file (the cases read the same session): cleaned up after all of them.
const h = steadHarness();
let provider: ProviderServer | undefined;
afterAll(async () => {
  await h.cleanup();
  await provider?.close();
});

/** The model: each prompt gets its tool calls first, then (after their results) an answer. */
function modelReply(req: RecordedRequest) {
  const prompt = lastUser(req);
  const answered = req.messages[req.messages.length - 1]?.role === "tool";
  switch (prompt) {
    case "check my order":
      return answered
        ? reply.text("Your order ships Monday.\nAnything else?")
        : reply.toolCalls([
            { id: "c0", name: "nosuch", args: {} },
            { id: "c1", name: "lookup", args: { q: "order 7" } },
            { id: "c2", name: "deploy", args: { env: "prod" } },
            { id: "c3", name: "flaky", args: {} },
          ]);
    case "charge me":
      return answered ? reply.text("I could not tell whether the charge went through.") : reply.toolCalls([{ id: "c4", name: "charge", args: { amount: 7 } }]);
    case "break":
      return reply.error(401, "Incorrect API key provided");
    case "deploy again":
      return reply.toolCalls([{ id: "c5", name: "deploy", args: { env: "staging" } }]);
    case "cut me off":
      return reply.toolCalls([{ id: "c9", name: "charge", args: { amount: 9 } }]);
    default:
      return reply.text(`ANSWER to ${prompt}`);
  }
}

function showAgent(name: string, url: string, over: Partial<AgentConfig> = {}) {
  return agent(name, {
    model: providerModel(url),
    retry: FAST_RETRY,
    tools: {
      lookup: tool({ input: z.object({ q: z.string() }), idempotent: true, run: ({ q }) => `found ${q}` }),
      deploy: tool({ input: z.object({ env: z.string() }), needsApproval: true, run: ({ env }) => `deployed to ${env}` }),
      flaky: tool({ input: z.object({}), idempotent: true, run: () => Promise.reject(new Error("disk full")) }),
      // Not idempotent (an effect): hangs until its worker is cut off.
      charge: tool({ input: z.object({ amount: z.number() }), run: () => new Promise<string>(() => undefined) }),
    },
    ...over,
  });
}

async function statusOf(stead: Stead, runId: string): Promise<string> {
  return (await stead.runs.get(runId)).status;
}

describe("stead sessions show", () => {
  let db: string;
  let dir: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    const s = await startProviderServer(modelReply);
    provider = s;
    const def = showAgent("show-agent", s.url);
    const stead = h.create();
    db = stead.store.location;
    dir = tempDir();
    const session = stead.session(def, "support-1");

    // Turn 1: an unknown tool, a result, a denial, a tool error, then the answer.
    ids.t1 = (await session.send("check my order")).runId;
    const w1 = h.worker(stead, { definitions: [def] }).start();
    await waitUntil("turn 1 to park at its approval", async () => (await statusOf(stead, ids.t1 ?? "")) === "waiting");
    await stead.runs.deny(ids.t1, "approve:c2", { by: "carol", reason: "not now" });
    await waitUntil("turn 1 to complete", async () => (await statusOf(stead, ids.t1 ?? "")) === "completed");
    await w1.stop();

    // Turn 2: an effect cut off mid-call, held, released with skip: "interrupted: outcome unknown".
    ids.t2 = (await session.send("charge me")).runId;
    await cutWhen(h, stead, def, ids.t2, hasStep("tool:c4", "intent"));
    const w2 = h.worker(stead, { definitions: [def], leaseMs: CUT_LEASE_MS }).start();
    await waitUntil("turn 2 to be held", async () => (await statusOf(stead, ids.t2 ?? "")) === "held", { timeoutMs: 20_000 });
    await stead.runs.release(ids.t2, "ambiguous_effect", { choice: "skip", by: "carol" });
    await waitUntil("turn 2 to complete", async () => (await statusOf(stead, ids.t2 ?? "")) === "completed");

    // Turn 3 fails (the provider refuses); turn 4 waits for an approval; turn 5 queues behind it.
    ids.t3 = (await session.send("break")).runId;
    await waitUntil("turn 3 to fail", async () => (await statusOf(stead, ids.t3 ?? "")) === "failed");
    ids.t4 = (await session.send("deploy again")).runId;
    await waitUntil("turn 4 to park", async () => (await statusOf(stead, ids.t4 ?? "")) === "waiting");
    ids.t5 = (await session.send("hello")).runId;
    await w2.stop();

    // Another session, whose agent ends a cut-off turn as interrupted.
    const cut = showAgent("show-cut", s.url, { onInterrupt: "interrupt" });
    ids.b1 = (await stead.session(cut, "support-2").send("cut me off")).runId;
    await cutWhen(h, stead, cut, ids.b1, hasStep("tool:c9", "intent"));
    const w3 = h.worker(stead, { definitions: [cut], leaseMs: CUT_LEASE_MS }).start();
    await waitUntil("the cut turn to end", async () => (await statusOf(stead, ids.b1 ?? "")) === "failed", { timeoutMs: 20_000 });
    await w3.stop();
  }, 90_000);

  it("prints every turn in order with its status, input, the model's text and each tool call's arguments and outcome", async () => {
    const r = await cli(["sessions", "show", "support-1", "--store", db], dir);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([
      "session support-1 (show-agent): 5 turns",
      `turn 1  completed  run ${ids.t1}`,
      "  user: check my order",
      '  tool call nosuch {} (c0)',
      "    not run: an unknown tool, or arguments that are not valid (the model was told)",
      '  tool call lookup {"q":"order 7"} (c1)',
      "    result: found order 7",
      '  tool call deploy {"env":"prod"} (c2)',
      "    denied by carol: not now",
      "  tool call flaky {} (c3)",
      "    error: disk full",
      "  model: Your order ships Monday.",
      "         Anything else?",
      `turn 2  completed  run ${ids.t2}`,
      "  user: charge me",
      '  tool call charge {"amount":7} (c4)',
      "    interrupted: outcome unknown",
      "  model: I could not tell whether the charge went through.",
      `turn 3  failed  run ${ids.t3}`,
      "  user: break",
      expect.stringMatching(/^ {2}model call model-1 failed: model test-provider\.chat:test-model refused the call: .*Incorrect API key provided/),
      `turn 4  waiting  run ${ids.t4}`,
      "  user: deploy again",
      '  tool call deploy {"env":"staging"} (c5)',
      `    waiting for approval: stead approve ${ids.t4} approve:c5  or  stead deny ${ids.t4} approve:c5 --reason "..."`,
      `turn 5  queued  run ${ids.t5}`,
      "  user: hello",
    ]);
  });

  it("an interrupted turn says so, and its cut-off call reads as interrupted: outcome unknown", async () => {
    const r = await cli(["sessions", "show", "support-2", "--store", db], dir);
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([
      "session support-2 (show-cut): 1 turn",
      `turn 1  interrupted  run ${ids.b1}`,
      "  user: cut me off",
      '  tool call charge {"amount":9} (c9)',
      "    interrupted: outcome unknown",
      expect.stringMatching(/^ {2}error: STEAD_TURN_INTERRUPTED: turn 1 of session support-2 was cut off by a crash/),
    ]);
  });

  it("--json gives the turns with their entries", async () => {
    const r = await cli(["sessions", "show", "support-1", "--json", "--store", db], dir);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { session: string; definition: string; turns: { turn: number; runId: string; status: string; queued: boolean; outcome: string | null; entries: Record<string, unknown>[] }[] };
    expect(out).toMatchObject({ session: "support-1", definition: "show-agent" });
    expect(out.turns.map((t) => [t.turn, t.runId, t.status, t.outcome, t.queued])).toEqual([
      [1, ids.t1, "completed", "completed", false],
      [2, ids.t2, "completed", "completed", false],
      [3, ids.t3, "failed", "failed", false],
      [4, ids.t4, "waiting", null, false],
      [5, ids.t5, "pending", null, true],
    ]);
    expect(out.turns[0]?.entries).toEqual([
      { type: "user", text: "check my order" },
      expect.objectContaining({ type: "model", step: "model-1", model: "test-provider.chat:test-model", text: "" }),
      { type: "tool-call", toolCallId: "c0", tool: "nosuch", args: {}, step: "tool:c0", approval: null, status: "answered-without-running" },
      { type: "tool-call", toolCallId: "c1", tool: "lookup", args: { q: "order 7" }, step: "tool:c1", approval: null, status: "result", result: "found order 7" },
      {
        type: "tool-call",
        toolCallId: "c2",
        tool: "deploy",
        args: { env: "prod" },
        step: "tool:c2",
        approval: { step: "approve:c2", status: "denied", by: "carol", reason: "not now", scope: "once" },
        status: "denied",
        message: "denied by carol: not now",
      },
      { type: "tool-call", toolCallId: "c3", tool: "flaky", args: {}, step: "tool:c3", approval: null, status: "error", message: "disk full" },
      expect.objectContaining({ type: "model", step: "model-2", text: "Your order ships Monday.\nAnything else?", finishReason: "stop" }),
    ]);
    expect(out.turns[3]?.entries[1]).toMatchObject({ type: "model", step: "model-1" });
    expect(out.turns[3]?.entries[2]).toMatchObject({ type: "tool-call", toolCallId: "c5", status: "waiting-approval", approval: { step: "approve:c5", status: "waiting" } });
  });

  it("an unknown session: exit 2, one line, the store unchanged", async () => {
    const before = dumpStore(db);
    const r = await cli(["sessions", "show", "nope", "--store", db], dir);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(lines(r.stderr)).toEqual(["stead: no session nope — list sessions with `stead sessions`"]);
    expect(dumpStore(db)).toEqual(before);
  });
});
