/**
 * Review 2 (item 19): the whole store's stream now starts "now" when no position is given, and
 * the typed client resumes a lost stream from the last event it yielded. A stream lost before
 * its first event has no such position: the client reconnects with none, so it starts at the new
 * "now", and every event committed while it was away is skipped without a word (the client's
 * doc says it resumes across reconnects and server restarts). The server sends no position when
 * a stream opens, so the client cannot know where it began.
 * Expected: the events committed during the gap are yielded after the reconnect.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "../../src/client/index.js";
import { createStead, workflow, type Stead } from "../../src/index.js";
import { tokensOf } from "../../src/server/auth.js";
import { listen, type Listening } from "../../src/server/listen.js";
import { tempDir } from "../helpers/temp-store.js";
import { join } from "node:path";

const parked = workflow("gap-parked", { version: "1" }, async (ctx) => (await ctx.approval("go", {})).approved);

describe("the typed client's whole-store stream, lost before its first event", () => {
  let dir: { dir: string; remove: () => void };
  let stead: Stead;
  let token = "";
  const serve = (port: number) => listen({ stead, authenticate: tokensOf(stead), port, maxBodyBytes: 64 * 1024, streams: { pollMs: 20 } });

  beforeAll(async () => {
    dir = tempDir("stead-firehose-gap-");
    stead = createStead({ store: join(dir.dir, "stead.db") });
    for (let i = 0; i < 3; i++) await stead.start(parked, {}, { id: `history-${i}` });
    token = (await stead.tokens.create({ name: "reader", role: "viewer" })).token;
  });
  afterAll(async () => {
    await stead.close();
    dir.remove();
  });

  it("yields the events committed while the server was away", async () => {
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
    await stead.start(parked, {}, { id: "in-gap" });
    server = await serve(port);
    try {
      // Reconnected; then one more run, so the reader has something to stop on.
      await new Promise((r) => setTimeout(r, 1_000));
      await stead.start(parked, {}, { id: "after-gap" });
      await Promise.race([reading, new Promise((r) => setTimeout(r, 10_000))]);
      abort.abort();
      expect(seen).toEqual(["in-gap", "after-gap"]);
    } finally {
      abort.abort();
      await server.close(500);
    }
  }, 60_000);
});
