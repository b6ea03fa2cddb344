/**
 * Sessions: turns queued with `send`, run one at a time in order, each continuing the transcript
 * of the turns before it (rebuilt from their journals); cut-off turns under both policies; and a
 * session adopting a changed definition at a turn boundary.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { agent, tool, type AgentConfig, type Recovery, type Stead, type ToolContext } from "../src/index.js";
import { providerModel, reply, type RecordedRequest } from "./helpers/provider-server.js";
import { deferred } from "./helpers/waiting.js";
import { CUT_LEASE_MS, FAST_RETRY, agentTestKit, contentText, cutWhen, eventsOf, lastUser, toolResult, transcriptProblems } from "./fixtures/agents/kit.js";

const { h, server } = agentTestKit();

/**
 * The model of every session test: a prompt containing "use the tool" gets a call of `lookup`,
 * then (after its result) an answer; any other prompt gets "ANSWER to <prompt>" at once.
 */
async function chatServer(options: { slowMs?: number } = {}) {
  return server((req: RecordedRequest) => {
    const prompt = lastUser(req);
    const last = req.messages[req.messages.length - 1];
    if (last?.role === "tool") return reply.text(`ANSWER to ${prompt} (with ${contentText(last)})`);
    if (prompt.includes("use the tool")) return reply.toolCalls([{ id: `call_${req.index}`, name: "lookup", args: { q: prompt } }]);
    return reply.text(`ANSWER to ${prompt}`, options.slowMs ? { delayMs: options.slowMs } : {});
  });
}

function chat(url: string, over: Partial<AgentConfig> = {}, lookup: (q: string, ctx: ToolContext) => Promise<string> | string = (q) => `found ${q.length}`) {
  return agent("chat", {
    model: providerModel(url),
    instructions: "Be brief.",
    retry: FAST_RETRY,
    tools: { lookup: tool({ input: z.object({ q: z.string() }), idempotent: true, run: ({ q }, ctx) => lookup(q, ctx) }) },
    ...over,
  });
}

/** Which turn each model request served, by its last user prompt. */
function turnOfRequests(requests: readonly RecordedRequest[], prompts: Map<string, number>): number[] {
  return requests.map((r) => prompts.get(lastUser(r)) ?? -1);
}

async function turnsOf(stead: Stead, def: ReturnType<typeof chat>, sessionId: string) {
  return (await stead.session(def, sessionId).turns()).map((t) => ({ turn: t.turn, status: t.status, outcome: t.outcome }));
}

describe("sessions", () => {
  it("three turns sent at once run in order, one at a time, each seeing the ones before", async () => {
    const s = await chatServer({ slowMs: 150 });
    const def = chat(s.url);
    const stead = h.create();
    const session = stead.session(def, "support-42");
    const texts = ["first: please use the tool", "second question", "third question"];
    const sent = await Promise.all(texts.map((t) => session.send(t)));
    expect(sent.map((x) => x.turn).sort()).toEqual([1, 2, 3]);
    const turnOf = new Map(texts.map((t, i) => [t, sent[i]?.turn ?? 0]));
    const promptOf = (turn: number) => texts[sent.findIndex((x) => x.turn === turn)] ?? "?";

    expect(await stead.sessions.list()).toEqual([
      expect.objectContaining({ id: "support-42", definition: "chat", turns: 3, open: 3, current: { runId: sent.find((x) => x.turn === 1)?.runId, turn: 1, status: "pending" }, last: null }),
    ]);

    // Plenty of slots: only the session's order keeps the turns apart.
    h.worker(stead, { definitions: [def], concurrency: 10 }).start();
    for (const x of sent) expect((await stead.runs.waitFor(x.runId, { timeoutMs: 20_000 })).status).toBe("completed");

    const byTurn = [1, 2, 3].map(promptOf);
    // Requests in turn order, never interleaved (the tool turn makes two).
    const order = turnOfRequests(s.requests, turnOf);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(new Set(order)).toEqual(new Set([1, 2, 3]));
    // Each turn's first request carries every earlier turn's prompt and answer: they had ended.
    for (const r of s.requests) {
      expect(transcriptProblems(r.messages)).toEqual([]);
      const turn = turnOf.get(lastUser(r)) ?? 0;
      for (let k = 1; k < turn; k++) {
        const seen = JSON.stringify(r.messages);
        expect(seen).toContain(byTurn[k - 1]);
        expect(seen).toContain(`ANSWER to ${byTurn[k - 1]}`);
      }
    }

    expect(await turnsOf(stead, def, "support-42")).toEqual([1, 2, 3].map((turn) => ({ turn, status: "completed", outcome: "completed" })));
    expect(await stead.sessions.list({ sessionId: "support-42" })).toEqual([
      expect.objectContaining({ id: "support-42", turns: 3, open: 0, current: null, last: { runId: sent.find((x) => x.turn === 3)?.runId, turn: 3, outcome: "completed", error: null } }),
    ]);
  });

  it("turn 2's request holds turn 1's prompt, tool call, tool result and answer, in order", async () => {
    const s = await chatServer();
    const def = chat(s.url);
    const stead = h.create();
    const session = stead.session(def, "s1");
    const t1 = await session.send("please use the tool on the invoice");
    const t2 = await session.send({ prompt: "and now?" });
    h.worker(stead, { definitions: [def] }).start();
    expect((await stead.runs.waitFor(t2.runId, { timeoutMs: 20_000 })).status).toBe("completed");
    expect((await stead.runs.get(t1.runId)).status).toBe("completed");

    const turn2 = s.requests[2];
    expect(s.requests).toHaveLength(3);
    expect(turn2?.messages.map((m) => [m.role, contentText(m), (m.tool_calls ?? []).map((c) => c.id).join(",")])).toEqual([
      ["system", "Be brief.", ""],
      ["user", "please use the tool on the invoice", ""],
      ["assistant", "", "call_0"],
      ["tool", "found 34", ""],
      ["assistant", "ANSWER to please use the tool on the invoice (with found 34)", ""],
      ["user", "and now?", ""],
    ]);
    // Turn 2 stores only its own response: the history lives in turn 1's journal.
    const rows = await stead.store.journal(t2.runId);
    expect(rows.map((r) => r.stepId)).toEqual(["model-1"]);
    expect(rows[0]?.output).not.toContain("invoice");
  });

  it("a failed turn ends as failed in sessions(); the next turn still runs and sees its prompt", async () => {
    const s = await server((req) => {
      const prompt = lastUser(req);
      if (prompt === "break") return reply.error(401, "Incorrect API key provided");
      return reply.text(`ANSWER to ${prompt}`);
    });
    const def = chat(s.url);
    const stead = h.create();
    const session = stead.session(def, "s2");
    await session.send("hello");
    const bad = await session.send("break");
    const next = await session.send("still there?");
    h.worker(stead, { definitions: [def] }).start();
    expect((await stead.runs.waitFor(next.runId, { timeoutMs: 20_000 })).status).toBe("completed");
    expect((await stead.runs.get(bad.runId)).error?.code).toBe("STEAD_PROVIDER_REJECTED");
    expect((await turnsOf(stead, def, "s2")).map((t) => t.outcome)).toEqual(["completed", "failed", "completed"]);
    const last = s.requests[s.requests.length - 1];
    expect(last?.messages.filter((m) => m.role === "user").map(contentText)).toEqual(["hello", "break", "still there?"]);

    // While the failed turn is the last ended one, sessions() reports it with its error.
    const again = await session.send("break");
    await stead.runs.waitFor(again.runId, { timeoutMs: 20_000 });
    const [view] = await stead.sessions.list({ sessionId: "s2" });
    expect(view).toMatchObject({ turns: 4, open: 0, last: { turn: 4, outcome: "failed" } });
    expect(view?.last?.error).toContain("Incorrect API key provided");
  });

  it('onInterrupt "interrupt": a turn cut off by a crash ends as interrupted, is not replayed, and the next turn runs', async () => {
    const s = await chatServer();
    const gate = deferred<string>();
    const looked: string[] = [];
    const def = chat(s.url, { onInterrupt: "interrupt" }, async (q) => {
      looked.push(q);
      return gate.promise;
    });
    const stead = h.create();
    const session = stead.session(def, "s3");
    const t1 = await session.send("please use the tool, slowly");
    const t2 = await session.send("are you there?");
    await cutWhen(h, stead, def, t1.runId, () => looked.length === 1);
    h.worker(stead, { definitions: [def], leaseMs: CUT_LEASE_MS }).start();
    expect((await stead.runs.waitFor(t2.runId, { timeoutMs: 20_000 })).status).toBe("completed");
    gate.resolve("too late");

    const cut = await stead.runs.get(t1.runId);
    expect(cut.status).toBe("failed");
    expect(cut.error?.code).toBe("STEAD_TURN_INTERRUPTED");
    expect(looked).toHaveLength(1);
    expect((await turnsOf(stead, def, "s3")).map((t) => t.outcome)).toEqual(["interrupted", "completed"]);
    expect((await stead.sessions.list({ sessionId: "s3" }))[0]?.last).toMatchObject({ turn: 2, outcome: "completed" });

    // Turn 2 sees turn 1 as it was cut: its call closed with "interrupted: outcome unknown".
    const turn2 = s.requests[s.requests.length - 1];
    expect(lastUser(turn2 as RecordedRequest)).toBe("are you there?");
    expect(transcriptProblems(turn2?.messages ?? [])).toEqual([]);
    expect(toolResult(turn2, "call_0")).toBe("interrupted: outcome unknown");
    expect(s.requests).toHaveLength(2);
  });

  it('default "resume": the cut-off turn continues from its last completed step, then the next turn runs', async () => {
    const s = await chatServer();
    const gate = deferred<string>();
    const calls: Recovery[] = [];
    const inits: Recovery[] = [];
    const def = chat(s.url, { init: (ctx) => void inits.push(ctx.recovery) }, (_q, ctx) => {
      calls.push(ctx.recovery);
      return calls.length === 1 ? gate.promise : "found it";
    });
    const stead = h.create();
    const session = stead.session(def, "s4");
    const t1 = await session.send("please use the tool, again");
    const t2 = await session.send("thanks");
    await cutWhen(h, stead, def, t1.runId, () => calls.length === 1);
    h.worker(stead, { definitions: [def], leaseMs: CUT_LEASE_MS }).start();
    expect((await stead.runs.waitFor(t2.runId, { timeoutMs: 20_000 })).status).toBe("completed");
    gate.resolve("too late");

    expect((await stead.runs.get(t1.runId)).output).toMatchObject({ text: "ANSWER to please use the tool, again (with found it)" });
    expect((await turnsOf(stead, def, "s4")).map((t) => t.outcome)).toEqual(["completed", "completed"]);
    expect(calls).toEqual([{ kind: "initial" }, { kind: "resumed", reason: "crash" }]);
    expect(inits).toEqual([{ kind: "initial" }, { kind: "resumed", reason: "crash" }, { kind: "initial" }]);
    // The model call journaled before the cut was not made again: turn 1 asked twice, turn 2 once.
    expect(s.requests.map((r) => lastUser(r))).toEqual(["please use the tool, again", "please use the tool, again", "thanks"]);
    expect(toolResult(s.requests[2], "call_0")).toBe("found it");
  });

  it("a turn not yet started adopts a changed definition at the turn boundary; a started one is held definition_changed", async () => {
    const s = await chatServer();
    const v1 = chat(s.url, { instructions: "Version one." });
    const v2 = chat(s.url, { instructions: "Version two." });
    const stead = h.create();
    const t1 = await stead.session(v1, "s5").send("hello");
    const w1 = h.worker(stead, { definitions: [v1] }).start();
    expect((await stead.runs.waitFor(t1.runId, { timeoutMs: 20_000 })).fingerprint).toBe(v1.fingerprint());
    await w1.stop();

    const t2 = await stead.session(v2, "s5").send("hello again");
    expect((await stead.runs.get(t2.runId)).fingerprint).toBeNull();
    const w2 = h.worker(stead, { definitions: [v2] }).start();
    const done = await stead.runs.waitFor(t2.runId, { timeoutMs: 20_000 });
    await w2.stop();
    expect(done.status).toBe("completed");
    expect(done.fingerprint).toBe(v2.fingerprint());
    expect(await stead.holds.list({ runId: t2.runId, open: false })).toEqual([]);
    expect((await eventsOf(stead, t2.runId, "run.fingerprint_adopted")).map((e) => e.data)).toEqual([{ fingerprint: v2.fingerprint() }]);
    const req2 = s.requests[1];
    expect(contentText(req2?.messages[0])).toBe("Version two.");
    expect(req2?.messages.slice(1).map((m) => [m.role, contentText(m)])).toEqual([
      ["user", "hello"],
      ["assistant", "ANSWER to hello"],
      ["user", "hello again"],
    ]);

    // A turn that started under v2 (parked at an approval) and resumes under v3 is held like any run.
    const gated = (instructions: string) =>
      chat(s.url, { instructions, tools: { lookup: tool({ input: z.object({ q: z.string() }), needsApproval: true, run: () => "ok" }) } });
    const v2g = gated("Version two.");
    const v3g = gated("Version three.");
    const t3 = await stead.session(v2g, "s5").send("please use the tool now");
    const w3 = h.worker(stead, { definitions: [v2g] }).start();
    await stead.runs.waitFor(t3.runId, { until: (r) => r.status === "waiting", timeoutMs: 20_000 });
    await w3.stop();
    await stead.runs.approve(t3.runId, "approve:call_2", { by: "ann" });
    h.worker(stead, { definitions: [v3g] }).start();
    await stead.runs.waitFor(t3.runId, { until: (r) => r.status === "held", timeoutMs: 20_000 });
    expect((await stead.holds.list({ runId: t3.runId }))[0]).toMatchObject({ kind: "definition_changed", details: { recorded: v2g.fingerprint(), current: v3g.fingerprint() } });
  });

  it("a session belongs to one agent: sending with another is refused", async () => {
    const s = await chatServer();
    const stead = h.create();
    await stead.session(chat(s.url), "s6").send("hi");
    const other = agent("other", { model: providerModel(s.url) });
    await expect(stead.session(other, "s6").send("hi")).rejects.toMatchObject({ code: "STEAD_ID_TAKEN", message: 'session s6 belongs to "chat", not "other"' });
    expect(() => stead.session(other, "bad id!")).toThrow(/invalid session id/);
  });
});
