/**
 * Issue 39, item 18: the SSE stream of a finished run stayed open sending only comments, and the
 * typed client's iterator never ended. A run's stream ends after the run's final event (an `end`
 * message, then the connection closes); a reconnect past the end is answered 204 No Content (an
 * `EventSource` stops there); the client's iterators return by themselves. Over real HTTP on
 * 127.0.0.1, on both stores, compared with the store's event rows.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createClient, type StreamedEvent } from "../../src/client/index.js";
import { workflow, type Stead } from "../../src/index.js";
import { STORE_KINDS } from "../helpers/both-stores.js";
import { servedStore, type Served } from "../helpers/served-store.js";
import { openSse, type SseConnection } from "../helpers/sse.js";
import { waitUntil } from "../helpers/waiting.js";

const steps = workflow("ends-steps", { version: "1" }, async (ctx, input: { n: number; fail?: boolean }) => {
  for (let i = 0; i < input.n; i++) await ctx.step(`s${i}`, () => new Promise((r) => setTimeout(() => r(i), 10)));
  if (input.fail) throw new Error("the last step failed on purpose");
  return input.n;
});
const parked = workflow("ends-parked", { version: "1" }, async (ctx) => (await ctx.approval("go", {})).approved);

describe.each(STORE_KINDS)("a finished run's stream on %s", (kind) => {
  let served: Served;
  let stead: Stead;
  let api: string;
  const stop: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    served = await servedStore(kind, "run-stream-ends", { streams: { pollMs: 20, heartbeatMs: 50 } });
    stead = served.s.stead;
    api = `${served.server.url}/api/v1`;
  });
  afterEach(async () => {
    for (const f of stop.splice(0).reverse()) await f();
  });
  afterAll(async () => {
    await served.close();
  });

  const stored = async (runId: string) => (await served.s.rows("SELECT seq, type FROM events WHERE run_id = ? ORDER BY seq", runId)).map((r) => ({ seq: Number(r.seq), type: String(r.type) }));
  const carried = (c: SseConnection) => c.messages.map((m) => ({ seq: m.event.seq, type: m.event.type }));
  const worker = () => {
    const w = stead.worker({ definitions: [steps], pollMs: 20 });
    w.start();
    stop.push(() => w.stop());
  };

  for (const outcome of ["completed", "failed"] as const) {
    it(`a run followed live to run.${outcome}: every event, an end message, and the connection closes`, async () => {
      const { id } = await stead.runs.start(steps, { n: 5, fail: outcome === "failed" });
      const live = await openSse(`${api}/runs/${id}/stream`);
      worker();
      await waitUntil("the stream to end by itself", () => live.isEnded(), { timeoutMs: 30_000 });
      expect(carried(live)).toEqual(await stored(id));
      expect(carried(live).at(-1)?.type).toBe(`run.${outcome}`);
      expect(live.named).toEqual([{ event: "end", data: JSON.stringify({ runId: id, status: outcome }) }]);
      // A reconnect past the end: 204, which tells an EventSource to stop.
      const again = await openSse(`${api}/runs/${id}/stream`, { "last-event-id": live.lastId() as string });
      await again.ended;
      expect([again.status, again.body]).toEqual([204, ""]);
    });
  }

  it("a run finished before the stream opened: its history, then the end; a run still waiting keeps its stream open", async () => {
    const waiting = await stead.runs.start(parked, {});
    const done = await stead.runs.start(parked, {});
    await stead.runs.cancel(done.id, { reason: "not needed" });
    const later = await openSse(`${api}/runs/${done.id}/stream`);
    const open = await openSse(`${api}/runs/${waiting.id}/stream`);
    await waitUntil("the finished run's stream to end", () => later.isEnded(), { timeoutMs: 30_000 });
    expect(carried(later)).toEqual(await stored(done.id));
    expect(later.named.map((n) => n.event)).toEqual(["end"]);
    await open.waitFor("heartbeats on the waiting run's stream", (c) => c.comments.filter((t) => t === "heartbeat").length >= 3);
    expect(open.isEnded()).toBe(false);
    expect(open.named).toEqual([]);
    open.close();
  });

  it("the typed client's run iterator returns by itself after the final event, without reconnecting", async () => {
    const { id } = await stead.runs.start(steps, { n: 3 });
    worker();
    let connections = 0;
    const client = createClient({
      url: served.server.url,
      token: served.tokens.viewer,
      fetch: (input, init) => {
        connections++;
        return fetch(input, init);
      },
    });
    const abort = new AbortController();
    const guard = setTimeout(() => abort.abort(), 30_000);
    const got: StreamedEvent[] = [];
    for await (const e of client.runs.events(id, { signal: abort.signal, retryMs: 20 })) got.push(e);
    clearTimeout(guard);
    expect(abort.signal.aborted).toBe(false);
    expect(got.map((e) => ({ seq: e.seq, type: e.type }))).toEqual(await stored(id));
    expect(connections).toBe(1);
    // Resumed past the end (the 204): the iterator returns at once, with nothing.
    const rest: StreamedEvent[] = [];
    for await (const e of client.runs.events(id, { after: got.at(-1)?.position as string, signal: abort.signal })) rest.push(e);
    expect(rest).toEqual([]);
  });
});
