/**
 * Live event streams (SSE) over real HTTP on 127.0.0.1, on both stores: what a subscriber
 * received is compared with the store's own event rows, read from the database afterwards.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { agent, createStead, workflow, type Stead } from "../src/index.js";
import { STORE_KINDS } from "./helpers/both-stores.js";
import { startProviderServer, providerModel, reply } from "./helpers/provider-server.js";
import { servedStore, type Served } from "./helpers/served-store.js";
import { openSse, type SseConnection } from "./helpers/sse.js";
import { waitUntil } from "./helpers/waiting.js";

/** Many small steps: a writer that keeps appending events while a subscriber reconnects. */
const chatty = workflow("stream-chatty", { version: "1" }, async (ctx, input: { steps: number; delayMs?: number }) => {
  for (let i = 0; i < input.steps; i++) await ctx.step(`s${i}`, async () => (input.delayMs ? new Promise((r) => setTimeout(() => r(i), input.delayMs)) : i));
  return input.steps;
});

/** The store's events (seq and type), from the database, not through Stead. */
async function stored(served: Served, runId?: string): Promise<{ seq: number; runId: string; type: string }[]> {
  const rows = runId === undefined ? await served.s.rows("SELECT seq, run_id, type FROM events ORDER BY seq") : await served.s.rows("SELECT seq, run_id, type FROM events WHERE run_id = ? ORDER BY seq", runId);
  return rows.map((r) => ({ seq: Number(r.seq), runId: String(r.run_id), type: String(r.type) }));
}

const seen = (conns: readonly SseConnection[]) => conns.flatMap((c) => c.messages.map((m) => ({ seq: m.event.seq, runId: m.event.runId, type: m.event.type })));

/** Reads a stream in short connections, each resumed by the last id it saw, until `done` holds. */
async function readInPieces(url: string, headers: Record<string, string>, perConnection: number, done: (all: ReturnType<typeof seen>) => boolean | Promise<boolean>): Promise<SseConnection[]> {
  const conns: SseConnection[] = [];
  let last: string | undefined;
  for (;;) {
    const c = await openSse(url, last === undefined ? headers : { ...headers, "last-event-id": last });
    expect(c.status).toBe(200);
    conns.push(c);
    await waitUntil("some events or the end", async () => c.messages.length >= perConnection || (await done(seen(conns))), { timeoutMs: 60_000 });
    c.close();
    await c.ended;
    last = c.lastId() ?? last;
    if (await done(seen(conns))) return conns;
  }
}

describe.each(STORE_KINDS)("event streams on %s", (kind) => {
  let served: Served;
  let stead: Stead;
  let api: string;
  const stop: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    served = await servedStore(kind, "server-streams", { streams: { heartbeatMs: 100, pollMs: 20, maxBufferedBytes: 64 * 1024 } });
    stead = served.s.stead;
    api = `${served.server.url}/api/v1`;
  });
  // Last in, first out: a worker stops before the provider it calls.
  afterEach(async () => {
    for (const f of stop.splice(0).reverse()) await f();
  });
  afterAll(async () => {
    await served.close();
  });

  it("a run's stream resumed by Last-Event-ID again and again while its worker appends: every event once, in order", async () => {
    // Slow enough that the run is still appending while the stream is read in pieces (a run done
    // before the first connect would come in one catch-up page).
    const { id } = await stead.runs.start(chatty, { steps: 40, delayMs: 15 });
    const w = stead.worker({ definitions: [chatty], pollMs: 20 });
    w.start();
    stop.push(() => w.stop());
    const conns = await readInPieces(`${api}/runs/${id}/stream`, {}, 7, async (all) => all.some((e) => e.type === "run.completed") && all.length === (await stored(served, id)).length);
    expect(conns.length).toBeGreaterThan(3);
    expect(seen(conns)).toEqual(await stored(served, id));
    // Each id is a position: the run's events after it, and nothing else.
    const middle = conns[1]?.lastId();
    expect(middle).toBeDefined();
    const again = await openSse(`${api}/runs/${id}/stream`, { "last-event-id": middle as string });
    const all = await stored(served, id);
    const k = all.findIndex((e) => e.seq === conns[1]?.messages.at(-1)?.event.seq);
    await again.waitFor("the rest", (c) => c.messages.length >= all.length - k - 1);
    again.close();
    expect(seen([again])).toEqual(all.slice(k + 1));
  });

  it("?after= starts a first connect after a position; the whole store's stream carries every run's events", async () => {
    const start = await stead.runs.eventsAfter(null, { runIds: [] });
    const a = await stead.runs.start(chatty, { steps: 3 });
    const b = await stead.runs.start(chatty, { steps: 3 });
    const w = stead.worker({ definitions: [chatty], pollMs: 20 });
    w.start();
    stop.push(() => w.stop());
    await stead.runs.waitFor(a.id);
    await stead.runs.waitFor(b.id);
    const c = await openSse(`${api}/events/stream?after=${encodeURIComponent(start.position)}`);
    const expected = (await stored(served)).filter((e) => e.runId === a.id || e.runId === b.id);
    await c.waitFor("both runs' events", (x) => x.messages.length >= expected.length);
    c.close();
    expect(seen([c])).toEqual(expected);
  });

  it("refuses a position the store never gave, an unknown run and an unknown session, as problems", async () => {
    const bad = await openSse(`${api}/events/stream`, { "last-event-id": "not-a-position" });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toMatchObject({ code: "STEAD_BAD_POSITION" });
    const run = await openSse(`${api}/runs/no-such-run/stream`);
    expect(run.status).toBe(404);
    expect(JSON.parse(run.body)).toMatchObject({ code: "STEAD_RUN_NOT_FOUND" });
    const session = await openSse(`${api}/sessions/no-such-session/stream`);
    expect(session.status).toBe(404);
    expect(JSON.parse(session.body)).toMatchObject({ code: "STEAD_SESSION_NOT_FOUND" });
    const wrongToken = await openSse(`${api}/events/stream`, { authorization: "Bearer not-a-real-token" });
    expect(wrongToken.status).toBe(401);
  });

  it("the OpenAPI document lists the streams as text/event-stream, with Last-Event-ID", async () => {
    const doc = (await (await fetch(`${api}/openapi.json`)).json()) as { paths: Record<string, { get?: { parameters: { name: string; in: string }[]; responses: Record<string, { content: Record<string, unknown> }> } }> };
    for (const path of ["/api/v1/runs/{runId}/stream", "/api/v1/sessions/{sessionId}/stream", "/api/v1/events/stream"]) {
      const get = doc.paths[path]?.get;
      expect(Object.keys(get?.responses["200"]?.content ?? {}), path).toEqual(["text/event-stream"]);
      expect(get?.parameters, path).toEqual(expect.arrayContaining([expect.objectContaining({ name: "Last-Event-ID", in: "header" }), expect.objectContaining({ name: "after", in: "query" })]));
    }
  });

  it("sends heartbeats on a quiet stream", async () => {
    const { id } = await stead.runs.start(chatty, { steps: 0 });
    const c = await openSse(`${api}/runs/${id}/stream`, { authorization: `Bearer ${served.tokens.viewer}` });
    expect(c.headers["content-type"]).toMatch(/^text\/event-stream/);
    await c.waitFor("three heartbeats", (x) => x.comments.filter((t) => t === "heartbeat").length >= 3);
    expect(served.server.liveSubscribers()).toBe(1);
    c.close();
    expect(c.messages.map((m) => m.event.type)).toEqual(["run.created"]);
    // A client that goes away is no subscriber any more.
    await waitUntil("the subscriber gone", () => served.server.liveSubscribers() === 0);
  });

  it("a subscriber that stops reading is dropped past its bound, while another is not; it resumes by id with nothing lost or repeated", async () => {
    const from = (await stead.runs.eventsAfter(null, { runIds: [] })).position;
    const url = `${api}/events/stream?after=${encodeURIComponent(from)}`;
    const slow = await openSse(url);
    const fast = await openSse(url);
    slow.pause();
    // Big events: enough to fill the loopback socket's buffers and then the subscriber's bound.
    const reason = "r".repeat(9_000);
    const ids: string[] = [];
    for (let i = 0; i < 1500; i++) {
      const { id } = await stead.runs.start(chatty, { steps: 1 });
      await stead.runs.cancel(id, { reason });
      ids.push(id);
    }
    const last = ids[ids.length - 1];
    await fast.waitFor("every event", (c) => c.messages.some((m) => m.event.runId === last && m.event.type === "run.cancelled"), 120_000);
    await waitUntil("the slow subscriber dropped", () => served.server.liveSubscribers() === 1, { timeoutMs: 60_000 });
    slow.resume();
    await slow.ended;
    expect(slow.comments.some((t) => t.startsWith("dropped"))).toBe(true);
    expect(slow.messages.length).toBeLessThan(fast.messages.length);
    const rest = await openSse(url, { "last-event-id": slow.lastId() as string });
    await rest.waitFor("the rest", (c) => slow.messages.length + c.messages.length >= fast.messages.length, 60_000);
    rest.close();
    fast.close();
    expect(seen([slow, rest])).toEqual(seen([fast]));
    expect(seen([fast])).toEqual((await stored(served)).filter((e) => ids.includes(e.runId)));
  }, 240_000);

  it("model.delta events stream while the model call is still in flight", async () => {
    const provider = await startProviderServer([reply.text("one two three four five six seven eight", { chunks: 8, chunkDelayMs: 300, hangAfterChunks: 6 })]);
    stop.push(() => provider.close());
    const talker = agent("stream-talker", { model: providerModel(provider.url), retry: { baseMs: 5, maxMs: 20 } });
    const { id } = await stead.runs.start(talker, "talk");
    const c = await openSse(`${api}/runs/${id}/stream`);
    const w = stead.worker({ definitions: [talker], pollMs: 20 });
    w.start();
    stop.push(() => w.stop());
    // The provider has sent half its answer and hangs: the call cannot have completed.
    await c.waitFor("live text", (x) => x.messages.filter((m) => m.event.type === "model.delta").length >= 2);
    const steps = await served.s.rows("SELECT step_id, status FROM steps WHERE run_id = ?", id);
    expect(steps.filter((s) => s.status === "completed")).toEqual([]);
    const deltas = c.messages.filter((m) => m.event.type === "model.delta");
    const text = deltas.map((m) => String(m.event.data.text)).join("");
    expect("one two three four five six seven eight".startsWith(text) && text.length > 0).toBe(true);
    const rows = await served.s.rows("SELECT seq FROM events WHERE run_id = ? AND type = 'model.delta' ORDER BY seq", id);
    expect(deltas.map((m) => m.event.seq)).toEqual(rows.map((r) => Number(r.seq)).slice(0, deltas.length));
    c.close();
    await stead.runs.cancel(id);
  });

  it("a model step's compacted text reaches a stream as the final message: live deltas then the marker with the text, or the marker alone for a later client", async () => {
    const answer = Array.from({ length: 12 }, (_, i) => `w${i}`).join(" ");
    const provider = await startProviderServer([reply.text(answer, { chunks: 12, chunkDelayMs: 120 })]);
    stop.push(() => provider.close());
    const talker = agent("stream-talker-done", { model: providerModel(provider.url), retry: { baseMs: 5, maxMs: 20 } });
    const { id } = await stead.runs.start(talker, "talk");
    const live = await openSse(`${api}/runs/${id}/stream`);
    const w = stead.worker({ definitions: [talker], pollMs: 20 });
    w.start();
    stop.push(() => w.stop());
    await live.waitFor("the run's end", (x) => x.messages.some((m) => m.event.type === "run.completed"));
    live.close();
    const marker = (c: SseConnection) => c.messages.filter((m) => m.event.type === "model.text");
    expect(live.messages.filter((m) => m.event.type === "model.delta").length).toBeGreaterThan(0);
    expect(marker(live).map((m) => m.event.data.text)).toEqual([answer]);
    // Compacted: the store holds no delta now, and a later client gets the text once, from the marker.
    expect(await served.s.rows("SELECT seq FROM events WHERE run_id = ? AND type = 'model.delta'", id)).toEqual([]);
    const later = await openSse(`${api}/runs/${id}/stream`);
    await later.waitFor("the run's end", (x) => x.messages.some((m) => m.event.type === "run.completed"));
    later.close();
    expect(later.messages.filter((m) => m.event.type === "model.delta")).toEqual([]);
    expect(marker(later).map((m) => m.event.data.text)).toEqual([answer]);
    expect(seen([later])).toEqual(await stored(served, id));
  });

  it("a session's stream carries its turns' events, a turn begun while streaming too", async () => {
    const session = stead.session(chatty, `stream-session-${kind}`);
    const first = { id: (await session.send({ steps: 1 })).runId };
    const w = stead.worker({ definitions: [chatty], pollMs: 20 });
    w.start();
    stop.push(() => w.stop());
    const c = await openSse(`${api}/sessions/stream-session-${kind}/stream`);
    const second = { id: (await session.send({ steps: 2 })).runId };
    await stead.runs.waitFor(first.id);
    await stead.runs.waitFor(second.id);
    const expected = (await stored(served)).filter((e) => e.runId === first.id || e.runId === second.id);
    await c.waitFor("both turns", (x) => x.messages.length >= expected.length);
    c.close();
    expect(seen([c])).toEqual(expected);
  });

  it("shutting the server down ends each stream with a retry hint", async () => {
    const other = await servedStore(kind, "server-streams-close", { streams: { retryMs: 1234 } });
    const { id } = await other.s.stead.runs.start(chatty, { steps: 0 });
    const c = await openSse(`${other.server.url}/api/v1/runs/${id}/stream`);
    await c.waitFor("the first event", (x) => x.messages.length === 1);
    expect(other.server.liveSubscribers()).toBe(1);
    await other.server.close(30_000);
    await c.ended;
    expect(c.comments).toContain("the server is shutting down");
    expect(c.retries.at(-1)).toBe(1234);
    await other.close();
  });
});

describe.skipIf(!STORE_KINDS.includes("postgres"))("event streams on postgres, many writers", () => {
  it("two instances writing concurrently: a whole-store subscriber resumed again and again gets every event once, each run's in order", async () => {
    const served = await servedStore("postgres", "server-streams-writers", { streams: { pollMs: 10 } });
    const api = `${served.server.url}/api/v1`;
    const from = (await served.s.stead.runs.eventsAfter(null, { runIds: [] })).position;
    const writers = [createStead({ store: served.s.location }), createStead({ store: served.s.location })];
    const workers = writers.map((s) => s.worker({ definitions: [chatty], pollMs: 10, concurrency: 4 }));
    try {
      const ids: string[] = [];
      for (const [i, s] of writers.entries()) for (let k = 0; k < 6; k++) ids.push((await s.runs.start(chatty, { steps: 8 + i })).id);
      for (const w of workers) w.start();
      const conns = await readInPieces(`${api}/events/stream?after=${encodeURIComponent(from)}`, {}, 25, async (all) => {
        const done = all.filter((e) => e.type === "run.completed" && ids.includes(e.runId)).length === ids.length;
        return done && all.length === (await stored(served)).length;
      });
      const got = seen(conns);
      const all = await stored(served);
      expect(new Set(got.map((e) => e.seq)).size).toBe(got.length);
      expect([...got].sort((a, b) => a.seq - b.seq)).toEqual(all);
      for (const id of ids) {
        const ofRun = got.filter((e) => e.runId === id).map((e) => e.seq);
        expect(ofRun).toEqual([...ofRun].sort((a, b) => a - b));
      }
    } finally {
      for (const w of workers) await w.stop();
      for (const s of writers) await s.close();
      await served.close();
    }
  }, 180_000);
});

describe("the number of live streams is bounded", () => {
  let served: Served;
  beforeAll(async () => {
    served = await servedStore("sqlite", "stream-cap", { streams: { maxStreams: 2 } });
  });
  afterAll(async () => {
    await served.close();
  });

  it("past maxStreams a new stream is refused 503 STEAD_TOO_MANY_STREAMS; once one closes, another opens", async () => {
    const url = `${served.server.url}/api/v1/events/stream`;
    const open = [await openSse(url), await openSse(url)];
    expect(open.map((c) => c.status)).toEqual([200, 200]);
    const third = await openSse(url);
    await third.ended;
    expect([third.status, (JSON.parse(third.body) as { code: string }).code]).toEqual([503, "STEAD_TOO_MANY_STREAMS"]);
    open[0]?.close();
    await waitUntil("the closed stream counted out", () => served.server.liveSubscribers() === 1);
    const again = await openSse(url);
    expect(again.status).toBe(200);
    again.close();
    open[1]?.close();
  });
});
