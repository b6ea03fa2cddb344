/**
 * Issue 39, item 19: a new `/events/stream` with no position replayed the store's whole event
 * history (every console tab and app paid for it). It starts where the store's events end now;
 * `after=0` (or `Last-Event-ID: 0`) and a position still replay. Over real HTTP on 127.0.0.1, on
 * both stores; what a stream carried is compared with the store's event rows.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type StreamedEvent } from "../../src/client/index.js";
import { workflow, type Stead } from "../../src/index.js";
import { STORE_KINDS } from "../helpers/both-stores.js";
import { servedStore, type Served } from "../helpers/served-store.js";
import { openSse, type SseConnection } from "../helpers/sse.js";
import { waitUntil } from "../helpers/waiting.js";

const parked = workflow("firehose-parked", { version: "1" }, async (ctx) => (await ctx.approval("go", {})).approved);

describe.each(STORE_KINDS)("the whole store's stream on %s", (kind) => {
  let served: Served;
  let stead: Stead;
  let api: string;
  const history: string[] = [];

  beforeAll(async () => {
    served = await servedStore(kind, "firehose-now", { streams: { pollMs: 20 } });
    stead = served.s.stead;
    api = `${served.server.url}/api/v1`;
    // A store with a history before any stream is opened.
    for (let i = 0; i < 5; i++) history.push((await stead.runs.start(parked, {})).id);
  });
  afterAll(async () => {
    await served.close();
  });

  const stored = async () => (await served.s.rows("SELECT seq, run_id, type FROM events ORDER BY seq")).map((r) => ({ seq: Number(r.seq), runId: String(r.run_id), type: String(r.type) }));
  const carried = (c: SseConnection) => c.messages.map((m) => ({ seq: m.event.seq, runId: m.event.runId, type: m.event.type }));
  const createdOf = (id: string) => (c: SseConnection) => c.messages.some((m) => m.event.runId === id && m.event.type === "run.created");

  it("a stream opened with no position carries what is written after it, and none of the history", async () => {
    const first = await openSse(`${api}/events/stream`);
    expect(first.status).toBe(200);
    const a = await stead.runs.start(parked, {});
    await first.waitFor("the new run's run.created", createdOf(a.id));
    // A second stream joins while the first is being served: it too starts where the events end.
    const second = await openSse(`${api}/events/stream`);
    const b = await stead.runs.start(parked, {});
    await second.waitFor("the next run's run.created", createdOf(b.id));
    await first.waitFor("the next run's run.created", createdOf(b.id));
    first.close();
    second.close();
    const all = await stored();
    expect(carried(first)).toEqual(all.filter((e) => e.runId === a.id || e.runId === b.id));
    expect(carried(second)).toEqual(all.filter((e) => e.runId === b.id));
    expect(carried(first).filter((e) => history.includes(e.runId))).toEqual([]);
  });

  it("after=0 and Last-Event-ID: 0 replay the whole history; a position replays what follows it", async () => {
    const all = await stored();
    for (const [query, headers] of [["?after=0", {}], ["", { "last-event-id": "0" }]] as const) {
      const c = await openSse(`${api}/events/stream${query}`, headers);
      expect(c.status).toBe(200);
      await c.waitFor("every stored event", (x) => x.messages.length >= all.length);
      c.close();
      expect(carried(c).slice(0, all.length)).toEqual(all);
    }
    const whole = await openSse(`${api}/events/stream?after=0`);
    await whole.waitFor("every stored event", (x) => x.messages.length >= all.length);
    whole.close();
    const cut = whole.messages[2]?.id as string;
    const rest = await openSse(`${api}/events/stream`, { "last-event-id": cut });
    await rest.waitFor("the events after the third", (x) => x.messages.length >= all.length - 3);
    rest.close();
    expect(carried(rest).slice(0, all.length - 3)).toEqual(all.slice(3));
  });

  it("the typed client: events() starts now, events({ after: '0' }) from the first event", async () => {
    const client = createClient({ url: served.server.url, token: served.tokens.viewer });
    const abort = new AbortController();
    const live: StreamedEvent[] = [];
    const opened = new Promise<void>((resolve) => {
      void (async () => {
        for await (const e of client.events({ signal: abort.signal, onConnection: (s) => s === "open" && resolve() })) live.push(e);
      })();
    });
    await opened;
    const c = await stead.runs.start(parked, {});
    const fromStart: StreamedEvent[] = [];
    for await (const e of client.events({ after: "0" })) {
      fromStart.push(e);
      if (e.runId === c.id) break;
    }
    await waitUntil("the live iterator to see the new run", () => live.some((e) => e.runId === c.id));
    abort.abort();
    const all = await stored();
    expect(live.map((e) => ({ seq: e.seq, runId: e.runId, type: e.type }))).toEqual(all.filter((e) => e.runId === c.id));
    expect(fromStart.map((e) => ({ seq: e.seq, runId: e.runId, type: e.type }))).toEqual(all.slice(0, fromStart.length));
    expect(fromStart.filter((e) => history.includes(e.runId)).length).toBe(history.length);
  });
});
