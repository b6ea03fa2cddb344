/**
 * Issue 39, item 19: with 2,000 open `/events/stream` connections every event was read from the
 * store and serialised once per stream, and request handling starved. The server's shared reader
 * reads each event once and serialises it once; every stream that carries it is handed the same
 * bytes. Asserted by structure on both stores: the chunks the streams' bodies yield are the very
 * same objects, and the store is read a bounded number of times however many streams are open.
 */
import { afterEach, describe, expect, it } from "vitest";
import { workflow, type Stead } from "../../src/index.js";
import { StreamHub } from "../../src/server/streams/hub.js";
import type { StreamSource } from "../../src/server/streams/subscriber.js";
import { onStore, STORE_KINDS, type OnStore } from "../helpers/both-stores.js";
import { waitUntil } from "../helpers/waiting.js";

const parked = workflow("fanout-parked", { version: "1" }, async (ctx) => (await ctx.approval("go", {})).approved);
const STREAMS = 40;

/** The Stead, with its calls to `runs.eventsAfter` counted (the store reads a stream makes). */
function counting(stead: Stead): { stead: Stead; reads: () => number; reset: () => void } {
  let reads = 0;
  // A namespace is frozen, so a proxy may not answer for its verbs: a copy with the counted one replaced.
  const runs = {
    ...stead.runs,
    eventsAfter: (...args: Parameters<Stead["runs"]["eventsAfter"]>) => {
      reads++;
      return stead.runs.eventsAfter(...args);
    },
  };
  const proxy = new Proxy(stead, {
    get(target, key) {
      if (key === "runs") return runs;
      const v = Reflect.get(target, key, target) as unknown;
      return typeof v === "function" ? (v as (...args: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { stead: proxy, reads: () => reads, reset: () => (reads = 0) };
}

/** Every chunk a stream's body yields, read in the background as a client would. */
function drain(body: ReadableStream<Uint8Array>): { chunks: Uint8Array[]; text: () => string } {
  const chunks: Uint8Array[] = [];
  const reader = body.getReader();
  void (async () => {
    for (;;) {
      const r = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (r.done) return;
      chunks.push(r.value);
    }
  })();
  const decoder = new TextDecoder();
  return { chunks, text: () => chunks.map((c) => decoder.decode(c)).join("") };
}

describe.each(STORE_KINDS)("fan-out of the whole store's stream on %s", (kind) => {
  let s: OnStore | undefined;
  let hub: StreamHub | undefined;
  afterEach(async () => {
    await hub?.close();
    await s?.cleanup();
  });

  it(`${STREAMS} streams: each event is read once and serialised once, every stream gets the same bytes`, async () => {
    s = await onStore(kind, "fanout-once");
    const counted = counting(s.stead);
    // No poll in the test's time: the store is read when the hub is woken, as after a POST.
    hub = new StreamHub(counted.stead, { pollMs: 600_000 });
    const everyRun: StreamSource = { runIds: () => Promise.resolve(null), start: "now" };
    const streams: ReturnType<typeof drain>[] = [];
    for (let i = 0; i < STREAMS; i++) {
      const body = await hub.open(everyRun, null);
      if (body === null) throw new Error("the hub answered no stream");
      streams.push(drain(body));
    }
    await waitUntil("every stream's first bytes", () => streams.every((x) => x.chunks.length > 0));
    counted.reset();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await s.stead.runs.start(parked, {})).id);
    hub.wake();
    await waitUntil("every stream to carry the three runs", () => streams.every((x) => ids.every((id) => x.text().includes(id))));
    // One read of the store for the three events, not one per stream (it was at least one per stream).
    expect(counted.reads()).toBeLessThanOrEqual(3);
    // Serialised once: the bytes carrying each event are one object, handed to every stream.
    for (const id of ids) {
      const carrying = streams.map((x) => x.chunks.find((c) => new TextDecoder().decode(c).includes(id)));
      expect(carrying.every((c) => c !== undefined)).toBe(true);
      for (const c of carrying) expect(c).toBe(carrying[0]);
    }
  });

  it("a stream resuming by the id of an event the shared reader sent takes what followed from it, with no read of its own", async () => {
    s = await onStore(kind, "fanout-resume");
    const counted = counting(s.stead);
    hub = new StreamHub(counted.stead, { pollMs: 600_000 });
    const everyRun: StreamSource = { runIds: () => Promise.resolve(null), start: "now" };
    const first = await hub.open(everyRun, null);
    if (first === null) throw new Error("the hub answered no stream");
    const live = drain(first);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await s.stead.runs.start(parked, {})).id);
    hub.wake();
    await waitUntil("the five runs on the live stream", () => ids.every((id) => live.text().includes(id)));
    const sent = [...live.text().matchAll(/^id: (.+)\ndata: (.+)$/gm)].map((m) => ({ id: m[1] as string, runId: (JSON.parse(m[2] as string) as { runId: string }).runId }));
    expect(sent.map((e) => e.runId)).toEqual(ids);
    counted.reset();
    const resumed = await hub.open(everyRun, sent[1]?.id as string);
    if (resumed === null) throw new Error("the hub answered no stream");
    const rest = drain(resumed);
    await waitUntil("the three runs after the second", () => ids.slice(2).every((id) => rest.text().includes(id)));
    const got = [...rest.text().matchAll(/^data: (.+)$/gm)].map((m) => (JSON.parse(m[1] as string) as { runId: string }).runId);
    expect(got).toEqual(ids.slice(2));
    // The one read: the check that the position is one this store gave.
    expect(counted.reads()).toBe(1);
  });
});
