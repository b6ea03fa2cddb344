/**
 * Provider outages as a real OpenAI-compatible server produces them (statuses, headers, cut and
 * silent streams), and what the run does about each: retry, fail over, park on quota, or fail.
 */
import { describe, expect, it } from "vitest";
import { agent, type AgentConfig } from "../src/index.js";
import { FAST_FOLLOW } from "./helpers/temp-store.js";
import { providerModel, reply, type Reply, type RecordedRequest } from "./helpers/provider-server.js";
import { waitUntil } from "./helpers/waiting.js";
import { FAST_RETRY, agentTestKit, eventsOf, journalShape } from "./fixtures/agents/kit.js";

const { h, server } = agentTestKit();

function talker(url: string, extra: Partial<AgentConfig> = {}) {
  return agent("talker", { model: providerModel(url, "m1"), retry: FAST_RETRY, ...extra });
}

describe("transient failures", () => {
  it.each([
    [500, "internal error"],
    [529, "overloaded"],
    [503, "service unavailable"],
  ])("HTTP %i, then an answer: a model.retry event, the run completes", async (status, message) => {
    const s = await server([reply.error(status, message), reply.text("hello after the outage")]);
    const stead = h.create();
    const run = await stead.run(talker(s.url), "hi", FAST_FOLLOW);
    expect(run.status).toBe("completed");
    expect((run.output as { text: string }).text).toBe("hello after the outage");
    expect(s.requests).toHaveLength(2);
    const retries = await eventsOf(stead, run.id, "model.retry");
    expect(retries.map((e) => e.data)).toEqual([
      { step: "model-1", model: "test-provider.chat:m1", try: 1, status, error: message, delayMs: expect.any(Number) as number },
    ]);
    // Retries happen inside one model step: one journal row, one attempt.
    expect(await journalShape(stead, run.id)).toEqual([["model-1", "model", "completed"]]);
    expect((await stead.runs.journal(run.id))[0]?.attempt).toBe(1);
  });

  it("retries exhausted: the run fails with STEAD_PROVIDER_UNAVAILABLE after exactly `attempts` tries", async () => {
    const s = await server(() => reply.error(500, "still down"));
    const stead = h.create();
    const run = await stead.run(talker(s.url, { retry: { ...FAST_RETRY, attempts: 3 } }), "hi", FAST_FOLLOW);
    expect(run.status).toBe("failed");
    expect(run.error?.code).toBe("STEAD_PROVIDER_UNAVAILABLE");
    expect(run.error?.message).toContain("no model answered model call model-1");
    expect(run.error?.message).toContain("still down");
    expect(s.requests).toHaveLength(3);
    expect((await eventsOf(stead, run.id, "model.retry")).map((e) => e.data.try)).toEqual([1, 2]);
    expect(await journalShape(stead, run.id)).toEqual([["model-1", "model", "failed"]]);
  });

  it("a stream cut off mid-way is retried; the answer is the full text of the successful attempt only", async () => {
    const s = await server([
      // A pause after the first chunk: its live text is there to be followed before the answer replaces it (under load too).
      reply.text("PARTIAL-ONE PARTIAL-TWO PARTIAL-THREE PARTIAL-FOUR", { chunks: 4, cutAfterChunks: 2, chunkDelayMs: 300 }),
      reply.text("The complete answer, from the second try.", { chunks: 3 }),
    ]);
    const stead = h.create();
    const seen: { type: string; data: Record<string, unknown> }[] = [];
    const run = await stead.run(talker(s.url), "hi", { ...FAST_FOLLOW, onEvent: (e) => void seen.push(e) });
    expect(run.status).toBe("completed");
    expect((run.output as { text: string }).text).toBe("The complete answer, from the second try.");
    expect((await stead.runs.journal(run.id))[0]?.output).toMatchObject({ content: [{ type: "text", text: "The complete answer, from the second try." }] });
    const retries = await eventsOf(stead, run.id, "model.retry");
    expect(retries).toHaveLength(1);
    expect(retries[0]?.data).toMatchObject({ step: "model-1", try: 1, status: null });
    // The cut-off try's text was published live, tagged with its try; once the answer is journaled,
    // the attempt's deltas (both tries) give way to it: the journal holds the answer, once.
    const live = seen.filter((e) => e.type === "model.delta");
    expect(live.filter((e) => e.data.try === 1).map((e) => e.data.text).join("")).toContain("PARTIAL-ONE");
    expect(await eventsOf(stead, run.id, "model.delta")).toEqual([]);
    expect((await eventsOf(stead, run.id, "model.text")).map((e) => e.data)).toEqual([{ step: "model-1", attempt: 1 }]);
  });

  it("a stream that goes silent is cut after idleTimeoutMs and retried", async () => {
    const s = await server([reply.text("I will never finish", { chunks: 2, hangAfterChunks: 1 }), reply.text("answer after the silence")]);
    const stead = h.create();
    const run = await stead.run(talker(s.url, { idleTimeoutMs: 300 }), "hi", FAST_FOLLOW);
    expect(run.status).toBe("completed");
    expect((run.output as { text: string }).text).toBe("answer after the silence");
    expect(s.requests[0]?.clientClosed).toBe(true);
    const retries = await eventsOf(stead, run.id, "model.retry");
    expect(retries.map((e) => e.data.error)).toEqual(["the model stream sent nothing for 300 ms"]);
  });

  it("a 429 that says nothing about when to come back is retried like a 5xx", async () => {
    const s = await server([reply.rateLimited(), reply.text("ok")]);
    const stead = h.create();
    const run = await stead.run(talker(s.url), "hi", FAST_FOLLOW);
    expect(run.status).toBe("completed");
    expect((await eventsOf(stead, run.id, "model.retry")).map((e) => e.data.status)).toEqual([429]);
    expect(await stead.runs.waits(run.id)).toEqual([]);
  });
});

describe("failover", () => {
  /** One server, two model ids: the handler answers per model. */
  async function twoModels(primary: (req: RecordedRequest) => Reply) {
    const s = await server((req) => (req.model === "primary" ? primary(req) : reply.text(`answered by ${req.model ?? "?"}`)));
    const def = agent("failover", {
      model: [providerModel(s.url, "primary"), providerModel(s.url, "secondary")],
      retry: { ...FAST_RETRY, attempts: 2 },
    });
    return { s, def };
  }

  it("the primary keeps failing: after its tries, the secondary answers; a model.failover event", async () => {
    const { s, def } = await twoModels(() => reply.error(500, "primary down"));
    const stead = h.create();
    const run = await stead.run(def, "hi", FAST_FOLLOW);
    expect(run.status).toBe("completed");
    expect((run.output as { text: string }).text).toBe("answered by secondary");
    expect(s.requests.map((r) => r.model)).toEqual(["primary", "primary", "secondary"]);
    const [failover] = await eventsOf(stead, run.id, "model.failover");
    expect(failover?.data).toMatchObject({ step: "model-1", from: "test-provider.chat:primary", to: "test-provider.chat:secondary" });
    expect(String(failover?.data.reason)).toContain("2 tries failed");
    expect((await stead.runs.journal(run.id))[0]?.output).toMatchObject({ model: "test-provider.chat:secondary" });
  });

  it("the primary is over quota: failover at once, no retry spent on it", async () => {
    const { s, def } = await twoModels(() => reply.rateLimited({ "retry-after": "120" }));
    const stead = h.create();
    const run = await stead.run(def, "hi", FAST_FOLLOW);
    expect(run.status).toBe("completed");
    expect(s.requests.map((r) => r.model)).toEqual(["primary", "secondary"]);
    expect(await eventsOf(stead, run.id, "model.retry")).toEqual([]);
    const [failover] = await eventsOf(stead, run.id, "model.failover");
    expect(failover?.data).toMatchObject({ from: "test-provider.chat:primary", to: "test-provider.chat:secondary", reason: "quota", resetAt: expect.any(Number) as number });
    expect(await stead.runs.waits(run.id)).toEqual([]);
  });

  it("every model down: STEAD_PROVIDER_UNAVAILABLE naming how many models were tried", async () => {
    const s = await server(() => reply.error(502, "bad gateway"));
    const def = agent("failover", { model: [providerModel(s.url, "primary"), providerModel(s.url, "secondary")], retry: { ...FAST_RETRY, attempts: 2 } });
    const stead = h.create();
    const run = await stead.run(def, "hi", FAST_FOLLOW);
    expect(run.status).toBe("failed");
    expect(run.error?.code).toBe("STEAD_PROVIDER_UNAVAILABLE");
    expect(run.error?.message).toContain("(tried 2 models)");
    expect(s.requests.map((r) => r.model)).toEqual(["primary", "primary", "secondary", "secondary"]);
  });
});

describe("a rate limit with a reset time", () => {
  it("parks the run in a quota wait until the reset; no request before it; the sweeper wakes it and the call succeeds", async () => {
    const resetMs = 1_200;
    let limitedAt = 0;
    const arrivals: number[] = [];
    const s = await server((req) => {
      arrivals.push(Date.now());
      if (req.index === 0) {
        limitedAt = Date.now();
        return reply.rateLimited({ "retry-after-ms": String(resetMs) });
      }
      return reply.text("answer after the reset");
    });
    const def = talker(s.url);
    const stead = h.create();
    const { id } = await stead.runs.start(def, "hi");
    const worker = h.worker(stead, { definitions: [def] }).start();

    const parked = await stead.runs.waitFor(id, { until: (r) => r.status === "waiting", timeoutMs: 20_000 });
    const parkedSeen = Date.now();
    expect(parked.lease).toBeNull();
    const [wait] = await stead.runs.waits(id);
    expect(wait).toMatchObject({ name: "model-1.quota", kind: "quota", status: "open", request: { model: "test-provider.chat:m1", status: 429 } });
    const wakeAt = wait?.wakeAt ?? 0;
    expect(wakeAt).toBeGreaterThanOrEqual(limitedAt + resetMs);
    expect(wakeAt).toBeLessThanOrEqual(parkedSeen + resetMs);
    expect(wait?.request).toMatchObject({ resetAt: wakeAt });
    expect(await journalShape(stead, id)).toEqual([
      ["model-1", "model", "completed"],
      ["model-1.quota", "quota", "waiting"],
    ]);
    expect((await stead.runs.journal(id))[0]?.output).toMatchObject({ kind: "quota", resetAt: wakeAt, status: 429 });
    // Parked: the worker holds no execution for it.
    await waitUntil("the worker to let the run go", () => worker.inFlight === 0);

    const why = await stead.runs.why(id);
    expect(why.text).toContain("quota for test-provider.chat:m1 to reset: parked with no process and no retry spent");
    if (Date.now() < wakeAt) expect(why.text).toContain(`(at ${new Date(wakeAt).toISOString()})`);
    expect(why.waysOut).toContainEqual(expect.objectContaining({ what: "make sure a worker runs", verb: "worker", runId: id }));

    const done = await stead.runs.waitFor(id, { timeoutMs: 20_000 });
    expect(done.status).toBe("completed");
    expect((done.output as { text: string }).text).toBe("answer after the reset");
    expect(arrivals).toHaveLength(2);
    expect(arrivals[1]).toBeGreaterThanOrEqual(wakeAt);
    expect(await journalShape(stead, id)).toEqual([
      ["model-1", "model", "completed"],
      ["model-1.quota", "quota", "completed"],
      ["model-1.2", "model", "completed"],
    ]);
    expect(await eventsOf(stead, id, "model.retry")).toEqual([]);
    expect((await eventsOf(stead, id, "wait.resolved")).map((e) => e.data)).toEqual([{ wait: "model-1.quota", kind: "quota", wakeAt }]);
    expect(done.output).toMatchObject({ modelCalls: 1 });
  });

  it("why shows the park and its reset time while it is far off", async () => {
    const s = await server([reply.rateLimited({ "retry-after": "3600" })]);
    const stead = h.create();
    const run = await stead.run(talker(s.url), "hi", FAST_FOLLOW);
    expect(run.status).toBe("waiting");
    const [wait] = await stead.runs.waits(run.id);
    const why = await stead.runs.why(run.id);
    expect(why.text).toMatch(/waiting for the provider's quota for test-provider\.chat:m1 to reset: parked with no process and no retry spent, reset in (59m|1h)/);
    expect(why.text).toContain(`(at ${new Date(wait?.wakeAt ?? 0).toISOString()})`);
    expect(s.requests).toHaveLength(1);
  });
});

describe("refusals", () => {
  it.each([
    [400, "Invalid schema for function 'deploy'"],
    [401, "Incorrect API key provided: sk-test"],
    [403, "You do not have access to this model"],
    [404, "The model `m1` does not exist"],
  ])("HTTP %i: the run fails with STEAD_PROVIDER_REJECTED carrying the provider's message, no retry", async (status, message) => {
    const s = await server(() => reply.error(status, message));
    const stead = h.create();
    const run = await stead.run(talker(s.url), "hi", FAST_FOLLOW);
    expect(run.status).toBe("failed");
    expect(run.error?.code).toBe("STEAD_PROVIDER_REJECTED");
    expect(run.error?.message).toContain(`model test-provider.chat:m1 refused the call: HTTP ${status}: ${message}`);
    expect(s.requests).toHaveLength(1);
    expect(await eventsOf(stead, run.id, "model.retry")).toEqual([]);
    const [step] = await stead.runs.journal(run.id);
    expect(step).toMatchObject({ id: "model-1", status: "failed", error: { code: "STEAD_PROVIDER_REJECTED" } });
  });

  it("HTTP 401: what to check (the API key's environment variable) reaches the recorded error and why", async () => {
    const s = await server(() => reply.error(401, "Incorrect API key provided"));
    const stead = h.create();
    const run = await stead.run(talker(s.url), "hi", FAST_FOLLOW);
    expect(run.error?.code).toBe("STEAD_PROVIDER_REJECTED");
    expect((await stead.runs.why(run.id)).text).toContain("environment variable");
    const failed = (await stead.runs.events({ runId: run.id })).find((e) => e.type === "run.failed");
    expect(String(failed?.data.fix)).toContain("environment variable");
  });

  it("a billing failure (insufficient_quota) is a refusal, not a quota park", async () => {
    const s = await server(() => reply.insufficientQuota());
    const stead = h.create();
    const run = await stead.run(talker(s.url), "hi", FAST_FOLLOW);
    expect(run.status).toBe("failed");
    expect(run.error?.code).toBe("STEAD_PROVIDER_REJECTED");
    expect(run.error?.message).toContain("exceeded your current quota");
    expect(await stead.runs.waits(run.id)).toEqual([]);
    expect(s.requests).toHaveLength(1);
  });
});
