/**
 * A follower shows a model's answer once, even where the live text's redaction hid more than the
 * whole answer's would. A bearer token that is a long JWT (Azure AD and Auth0 access tokens run
 * past 512 characters) outgrows what a stream holds back, so the live text shows one marker for
 * all of it; the journaled answer must then read as the live text did, or a follower (`stead run`,
 * `stead logs -f`: cli/live-text.ts) finds its live text no prefix of the answer and prints the
 * whole answer again. A real provider server on 127.0.0.1 streams it in pieces past the 200 ms
 * flush; the follower reads the store's event stream.
 */
import { describe, expect, it } from "vitest";
import { agent, type Stead } from "../../src/index.js";
import { LiveText } from "../../src/cli/live-text.js";
import { providerModel, reply } from "../helpers/provider-server.js";
import { agentTestKit, FAST_RETRY } from "../fixtures/agents/kit.js";

const { h, server } = agentTestKit();

const b64url = (text: string) => Buffer.from(text).toString("base64url");
const JWT = `eyJ${b64url('hbGciOiJSUzI1NiJ9').slice(0, 20)}.eyJ${b64url('{"roles":["reader","writer"],"tenant":"contoso"}'.repeat(10))}.${b64url("signature-bytes!".repeat(8))}`;

async function followToEnd(stead: Stead, runId: string): Promise<string> {
  const live = new LiveText(stead);
  let shown = "";
  let position: string | null = null;
  for (;;) {
    const done = ["completed", "failed"].includes((await stead.runs.get(runId)).status);
    const page = await stead.runs.eventsAfter(position, { runId, limit: 1000 });
    position = page.position;
    for (const raw of page.events) {
      const e = await live.expand(raw);
      if (e.type === "model.delta") shown += String(e.data.text);
      if (e.type === "model.text") shown += String(e.data.rest);
    }
    if (done && page.events.length === 0) return shown;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("a follower shows an answer once", () => {
  it("when the answer holds a bearer token longer than a stream holds back", async () => {
    expect(JWT.length).toBeGreaterThan(600);
    const text = `curl -H 'Authorization: Bearer ${JWT}' https://api.example/`;
    const pieces = text.match(/[\s\S]{1,60}/g) ?? [];
    const s = await server([reply.pieces(pieces, { chunkDelayMs: 230 })]);
    const talker = agent("long-bearer", { model: providerModel(s.url), retry: FAST_RETRY });
    const stead = h.create();
    const { id } = await stead.runs.start(talker, "show me the call");
    h.worker(stead, { definitions: [talker], pollMs: 20 }).start();
    const shown = await followToEnd(stead, id);
    const run = await stead.runs.get(id);
    expect(run.status).toBe("completed");
    const answer = (run.output as { text: string }).text;
    expect(answer).not.toContain(JWT.slice(40, 80));
    expect(answer, answer).toMatch(/^curl -H 'Authorization: /);
    expect(answer, answer).toMatch(/' https:\/\/api.example\/$/);
    // Shown once: what the follower printed is the journaled answer, not the answer twice.
    expect(shown).toBe(answer);
  }, 60_000);
});
