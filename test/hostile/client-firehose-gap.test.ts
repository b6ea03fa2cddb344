/**
 * Review 2 (item 19): the whole store's stream now starts "now" when no position is given, and
 * the typed client resumes a lost stream from the last event it yielded. A stream lost before
 * its first event has no such position: the client reconnects with none, so it starts at the new
 * "now", and every event committed while it was away is skipped without a word (the client's
 * doc says it resumes across reconnects and server restarts). The server sends no position when
 * a stream opens, so the client cannot know where it began.
 * Expected: the events committed during the gap are yielded after the reconnect.
 *
 * Fixed: the client asks where the store's events end (`GET /events/position`) before it connects
 * and starts there, and the server sends that position as a stream's first `id:` (no data), so a
 * raw SSE reader such as EventSource resumes from it too. Both stores.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../src/client/index.js";
import { workflow, type Stead } from "../../src/index.js";
import { tokensOf } from "../../src/server/auth.js";
import { listen, type Listening } from "../../src/server/listen.js";
import { onStore, STORE_KINDS, type OnStore } from "../helpers/both-stores.js";

const parked = workflow("gap-parked", { version: "1" }, async (ctx) => (await ctx.approval("go", {})).approved);

describe.each(STORE_KINDS)("the whole store's stream lost before its first event, on %s", (kind) => {
  let s: OnStore;
  let stead: Stead;
  let token = "";
  const serve = (port: number) => listen({ stead, authenticate: tokensOf(stead), port, maxBodyBytes: 64 * 1024, streams: { pollMs: 20 } });

  beforeAll(async () => {
    s = await onStore(kind, "firehose-gap");
    stead = s.stead;
    for (let i = 0; i < 3; i++) await stead.runs.start(parked, {}, { id: `history-${i}` });
    token = (await stead.tokens.create({ name: "reader", role: "viewer" })).token;
  });
  afterAll(async () => {
    await s.cleanup();
  });

  it("the typed client yields the events committed while the server was away", async () => {
    let server: Listening = await serve(0);
    const port = server.port;
    const client = createClient({ url: server.url, token });
    const states: string[] = [];
    const abort = new AbortController();
    const seen: string[] = [];
    const it = client.events({ signal: abort.signal, retryMs: 100, maxRetryMs: 200, onConnection: (s) => states.push(s) })[Symbol.asyncIterator]();
    const reading = (async () => {
      for (;;) {
        const r = await it.next();
        if (r.done) return;
        if (r.value.type === "run.created") seen.push(r.value.runId);
        if (seen.includes("after-gap")) return;
      }
    })();
    const until = async (what: string, ok: () => boolean) => {
      for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 25));
      expect(ok(), what).toBe(true);
    };
    await until("the stream opened", () => states.includes("open"));
    // The server goes away (a restart) before any event was written.
    await server.close(500);
    await until("the client saw the stream lost", () => states.includes("lost"));
    await stead.runs.start(parked, {}, { id: "in-gap" });
    await stead.runs.start(parked, {}, { id: "in-gap-2" });
    server = await serve(port);
    try {
      // Reconnected; then one more run, so the reader has something to stop on.
      await new Promise((r) => setTimeout(r, 1_000));
      await stead.runs.start(parked, {}, { id: "after-gap" });
      await Promise.race([reading, new Promise((r) => setTimeout(r, 10_000))]);
      abort.abort();
      expect(seen).toEqual(["in-gap", "in-gap-2", "after-gap"]);
    } finally {
      abort.abort();
      await server.close(500);
    }
  }, 60_000);

  it("a raw SSE reader is told where the stream began, and resuming from it carries what was written since", async () => {
    const server = await serve(0);
    try {
      // What EventSource keeps: the last `id:` field seen, with or without data.
      const opened = await new Promise<{ text: string; close: () => void }>((resolve, reject) => {
        const req = request(`${server.url}/api/v1/events/stream`, { headers: { accept: "text/event-stream", authorization: `Bearer ${token}` } }, (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => {
            text += c;
            if (/^id: .+$/m.test(text)) resolve({ text, close: () => req.destroy() });
          });
        });
        req.on("error", reject);
        req.end();
        setTimeout(() => reject(new Error("no id: in the stream's first bytes")), 10_000);
      });
      opened.close();
      expect(opened.text).not.toMatch(/^data:/m);
      const began = /^id: (.+)$/m.exec(opened.text)?.[1] as string;
      await stead.runs.start(parked, {}, { id: "raw-gap" });
      const resumed = await fetch(`${server.url}/api/v1/events/stream`, { headers: { accept: "text/event-stream", authorization: `Bearer ${token}`, "last-event-id": began } });
      const reader = (resumed.body as ReadableStream<Uint8Array>).getReader();
      let text = "";
      while (!text.includes('"raw-gap"')) {
        const r = await reader.read();
        if (r.done) break;
        text += new TextDecoder().decode(r.value);
      }
      await reader.cancel();
      expect(text).toContain('"runId":"raw-gap","type":"run.created"');
    } finally {
      await server.close(500);
    }
  }, 60_000);
});
