/**
 * A secret a model streams across several pieces of live text reaches no read path. A real
 * provider server on 127.0.0.1 streams `Hello Bearer <token> and goodbye` one word per SSE chunk,
 * each word after the 200 ms live-text flush, so `Bearer` and the token are written in different
 * `model.delta` events unless the stream is redacted as one text. The first attempt is cut off (its
 * worker stopped by force mid-call: its deltas stay), the second completes. Then every way out is
 * read: the store's own files or tables, an export, `stead logs` and `stead export` from the real
 * CLI, `GET /runs/{id}/events`, the run's SSE stream, MCP `run_events`; and, on an encrypted store,
 * what the real `stead run` printed while it followed the run live. None holds any 8 characters of
 * the token; the cut-off attempt's deltas show the redaction marker where it stood.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { agent, type EventView } from "../../src/index.js";
import { cli, FIXTURES, requireBuild, spawnCli } from "../cli-helpers.js";
import { STORE_KINDS, storeText } from "../helpers/both-stores.js";
import { providerModel, reply, startProviderServer, type ProviderServer } from "../helpers/provider-server.js";
import { servedStore, type Served } from "../helpers/served-store.js";
import { openSse } from "../helpers/sse.js";
import { tempDir } from "../helpers/temp-store.js";
import { waitUntil } from "../helpers/waiting.js";
import { CUT_LEASE_MS, FAST_RETRY } from "../fixtures/agents/kit.js";

const TOKEN = "zxcvbnmasdfghjkl0987654321";
const WORDS = ["Hello ", "Bearer ", `${TOKEN} `, "and ", "goodbye"];
/** Past the 200 ms flush of live text: every word is its own `model.delta`. */
const WORD_GAP_MS = 260;
const CLI_CHAT = join(FIXTURES, "..", "agents", "cli-chat.ts");

/** Every 8-character window of the token: a piece of it anywhere is a leak. */
const WINDOWS = Array.from({ length: TOKEN.length - 7 }, (_, i) => TOKEN.slice(i, i + 8));
function leaks(where: string, text: string): void {
  const found = WINDOWS.filter((w) => text.includes(w));
  expect(found, `${where} holds part of the token`).toEqual([]);
}

const deltaText = (events: readonly { type: string; data: Record<string, unknown> }[], attempt: number) =>
  events
    .filter((e) => e.type === "model.delta" && e.data.attempt === attempt)
    .map((e) => String(e.data.text))
    .join("");

beforeAll(() => requireBuild());

describe.each(STORE_KINDS)("a secret streamed across live-text pieces on %s", (kind) => {
  let served: Served | undefined;
  let provider: ProviderServer | undefined;
  afterEach(async () => {
    await provider?.close();
    await served?.close();
    served = provider = undefined;
  });

  it("reaches neither the store, nor an export, the CLI, the HTTP API, SSE nor MCP, in a cut-off attempt or a completed one", async () => {
    let requests = 0;
    provider = await startProviderServer(() => {
      requests += 1;
      // The first call hangs after its last word, until its worker is stopped: a cut-off attempt.
      return reply.pieces(WORDS, { chunkDelayMs: WORD_GAP_MS, ...(requests === 1 ? { hangAfterChunks: WORDS.length } : {}) });
    });
    served = await servedStore(kind, "streamed-secret");
    const { s, server, tokens } = served;
    const talker = agent("streamed-secret", { model: providerModel(provider.url), retry: FAST_RETRY });
    const { id } = await s.stead.runs.start(talker, "say it");
    const sse = await openSse(`${server.url}/api/v1/runs/${id}/stream`, { authorization: `Bearer ${tokens.viewer}` });

    const doomed = s.stead.worker({ definitions: [talker], leaseMs: CUT_LEASE_MS, pollMs: 20 }).start();
    await waitUntil("the first attempt's last word", async () => deltaText(await s.stead.runs.events({ runId: id }), 1).endsWith("goodbye"), { timeoutMs: 30_000 });
    await doomed.stop({ graceMs: 20 });
    expect(deltaText(await s.stead.runs.events({ runId: id }), 1)).toBe("Hello Bearer [redacted:bearer-token] and goodbye");

    const finisher = s.stead.worker({ definitions: [talker], leaseMs: CUT_LEASE_MS, pollMs: 20 }).start();
    const run = await s.stead.runs.waitFor(id, { timeoutMs: 30_000 });
    await finisher.stop();
    expect(run.status).toBe("completed");
    expect(run.output).toMatchObject({ text: "Hello Bearer [redacted:bearer-token] and goodbye" });
    const events = await s.stead.runs.events({ runId: id });
    // The cut-off attempt's live text stays, redacted; the completed one's gave way to its response.
    expect(deltaText(events, 1)).toBe("Hello Bearer [redacted:bearer-token] and goodbye");
    expect(events.filter((e) => e.type === "model.delta" && e.data.attempt === 2)).toEqual([]);

    leaks("the store", await storeText(s));
    let dump = "";
    await s.stead.admin.exportDump(new Writable({ write: (c: Buffer, _e, done) => ((dump += c.toString("utf8")), done()) }));
    leaks("an export", dump);

    const cwd = tempDir("stead-streamed-cli-");
    try {
      const logs = await cli(["logs", id, "--store", s.location], cwd.dir);
      expect(logs.code, logs.stderr).toBe(0);
      expect(logs.stdout).toContain("[redacted:bearer-token]");
      leaks("stead logs", logs.stdout + logs.stderr);
      const json = await cli(["logs", id, "--json", "--store", s.location], cwd.dir);
      leaks("stead logs --json", json.stdout);
      const exported = await cli(["export", "--store", s.location, "--out", join(cwd.dir, "dump.jsonl")], cwd.dir);
      expect(exported.code, exported.stderr).toBe(0);
      leaks("stead export", readFileSync(join(cwd.dir, "dump.jsonl"), "utf8") + exported.stdout);
    } finally {
      cwd.remove();
    }

    const api = await fetch(`${server.url}/api/v1/runs/${id}/events`, { headers: { authorization: `Bearer ${tokens.viewer}` } });
    expect(api.status).toBe(200);
    const apiText = await api.text();
    expect(apiText).toContain("[redacted:bearer-token]");
    leaks("GET /runs/{id}/events", apiText);

    await sse.waitFor("the run's last event", (c) => c.messages.some((m) => m.event.type === "run.completed"), 20_000);
    sse.close();
    const streamed = sse.messages.map((m) => m.event) as unknown as EventView[];
    expect(deltaText(streamed, 1)).toBe("Hello Bearer [redacted:bearer-token] and goodbye");
    leaks("the SSE stream", JSON.stringify(sse.messages));

    const mcp = new Client({ name: "stead-hostile", version: "1.0.0" });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${tokens.viewer}` } } }));
    try {
      const answer = await mcp.callTool({ name: "run_events", arguments: { runId: id } });
      const text = JSON.stringify(answer);
      expect(text).toContain("[redacted:bearer-token]");
      leaks("MCP run_events", text);
    } finally {
      await mcp.close();
    }
  }, 120_000);
});

describe("a secret streamed to `stead run` on an encrypted store", () => {
  let provider: ProviderServer | undefined;
  afterEach(async () => {
    await provider?.close();
    provider = undefined;
  });

  it("is redacted in what `stead run` prints while it follows the run live", async () => {
    provider = await startProviderServer(() => reply.pieces(WORDS, { chunkDelayMs: WORD_GAP_MS }));
    const work = tempDir("stead-streamed-run-");
    const keys = tempDir("stead-streamed-keys-");
    try {
      const env = { STEAD_KEY_DIR: keys.dir, AGENT_TEST_PROVIDER_URL: provider.url };
      const init = await cli(["keys", "init"], work.dir, { env });
      expect(init.code, init.stderr).toBe(0);
      const running = spawnCli(["run", CLI_CHAT, "--input", JSON.stringify("say it")], work.dir, { env });
      const end = await running.done;
      expect(end.code, end.stderr).toBe(0);
      expect(end.stdout).toContain("Hello Bearer [redacted:bearer-token]");
      leaks("stead run's live output", end.stdout + end.stderr);
    } finally {
      work.remove();
      keys.remove();
    }
  }, 60_000);
});
