/**
 * Issue 39, item 19: the whole store's streams are fed from one shared read, and a client that
 * stops reading must not hold that read back nor grow the server's memory: it is cut off once its
 * queue passes the bound and it took nothing for a heartbeat interval, and it resumes by its last
 * id with nothing lost and nothing repeated, while a stream that reads on is never cut. Over real
 * HTTP on 127.0.0.1, on both stores, compared with the store's event rows.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workflow, type Stead } from "../../src/index.js";
import { STORE_KINDS } from "../helpers/both-stores.js";
import { servedStore, type Served } from "../helpers/served-store.js";
import { openSse, type SseConnection } from "../helpers/sse.js";
import { waitUntil } from "../helpers/waiting.js";

const parked = workflow("slow-reader-parked", { version: "1" }, async (ctx) => (await ctx.approval("go", {})).approved);

describe.each(STORE_KINDS)("a slow reader of the whole store's stream on %s", (kind) => {
  let served: Served;
  let stead: Stead;
  let api: string;

  beforeAll(async () => {
    served = await servedStore(kind, "slow-reader", { streams: { heartbeatMs: 100, pollMs: 20, maxBufferedBytes: 64 * 1024 } });
    stead = served.s.stead;
    api = `${served.server.url}/api/v1`;
  });
  afterAll(async () => {
    await served.close();
  });

  const carried = (conns: readonly SseConnection[]) => conns.flatMap((c) => c.messages.map((m) => ({ seq: m.event.seq, runId: m.event.runId, type: m.event.type })));

  it("is cut off past its bound while a reading stream is not; it resumes by id with nothing lost or repeated", async () => {
    // Both start now (no position): fed by the shared reader, not by reads of their own.
    const slow = await openSse(`${api}/events/stream`);
    const fast = await openSse(`${api}/events/stream`);
    slow.pause();
    // Big events, enough to fill the loopback socket's buffers and then the stream's bound.
    const reason = "r".repeat(60_000);
    const ids: string[] = [];
    for (let i = 0; i < 300; i++) {
      const { id } = await stead.runs.start(parked, {});
      await stead.runs.cancel(id, { reason });
      ids.push(id);
    }
    const last = ids[ids.length - 1];
    await fast.waitFor("every event", (c) => c.messages.some((m) => m.event.runId === last && m.event.type === "run.cancelled"), 120_000);
    await waitUntil("the slow stream cut off", () => served.server.liveSubscribers() === 1, { timeoutMs: 60_000 });
    slow.resume();
    await slow.ended;
    expect(slow.comments.some((t) => t.startsWith("dropped"))).toBe(true);
    expect(fast.isEnded()).toBe(false);
    expect(slow.messages.length).toBeLessThan(fast.messages.length);
    const rest = await openSse(`${api}/events/stream`, { "last-event-id": slow.lastId() as string });
    await rest.waitFor("the rest", (c) => slow.messages.length + c.messages.length >= fast.messages.length, 60_000);
    rest.close();
    fast.close();
    const stored = (await served.s.rows("SELECT seq, run_id, type FROM events ORDER BY seq")).map((r) => ({ seq: Number(r.seq), runId: String(r.run_id), type: String(r.type) }));
    expect(carried([fast])).toEqual(stored.filter((e) => ids.includes(e.runId)));
    expect(carried([slow, rest])).toEqual(carried([fast]));
  }, 240_000);
});
