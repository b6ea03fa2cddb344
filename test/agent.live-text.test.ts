/**
 * Live model text for followers. While a model call streams, its text is published as
 * `model.delta` events; once the call's response is journaled, they are deleted and a
 * `model.text` marker takes their place. A follower that resumes inside that range, or comes
 * after, shows the completed text exactly once (the CLI's LiveText): what it already showed,
 * plus the rest from the journal, is the answer, with nothing repeated and nothing missing.
 */
import { describe, expect, it } from "vitest";
import { agent, type EventView, type Stead } from "../src/index.js";
import { LiveText } from "../src/cli/live-text.js";
import { providerModel, reply } from "./helpers/provider-server.js";
import { waitUntil } from "./helpers/waiting.js";
import { agentTestKit, FAST_RETRY } from "./fixtures/agents/kit.js";

const { h, server } = agentTestKit();

/** What a follower from `afterSeq` shows, through LiveText, until the run has ended and every event is read. */
async function follow(stead: Stead, runId: string, afterSeq: number): Promise<string> {
  const live = new LiveText(stead);
  let shown = "";
  let last = afterSeq;
  for (;;) {
    const done = ["completed", "failed"].includes((await stead.get(runId)).status);
    const page: EventView[] = await stead.events({ runId, afterSeq: last });
    for (const raw of page) {
      last = raw.seq;
      const e = await live.expand(raw);
      if (e.type === "model.delta") shown += String(e.data.text);
      if (e.type === "model.text") shown += String(e.data.rest);
    }
    if (done && page.length === 0) return shown;
    await new Promise((r) => setTimeout(r, 15));
  }
}

describe("live model text", () => {
  const text = Array.from({ length: 120 }, (_, i) => `word${i}`).join(" ");

  it("a follower that joins mid-stream shows the answer once: the deltas it saw, then the rest in the marker's place", async () => {
    const s = await server([reply.text(text, { chunks: 120, chunkDelayMs: 8 })]);
    const talker = agent("talker", { model: providerModel(s.url), retry: FAST_RETRY });
    const stead = h.create();
    const { id } = await stead.start(talker, "talk");
    h.worker(stead, { definitions: [talker], pollMs: 20 }).start();
    const firstDelta = await waitUntil("the first delta", async () => (await stead.events({ runId: id })).find((e) => e.type === "model.delta"), { timeoutMs: 20_000 });
    const shown = await follow(stead, id, firstDelta.seq - 1);
    expect(shown).toBe(text);
    expect((await stead.get(id)).output).toMatchObject({ text });
  });

  it("a follower that comes after the call was journaled gets the whole text from the marker, once", async () => {
    const s = await server([reply.text(text, { chunks: 30 })]);
    const talker = agent("talker", { model: providerModel(s.url), retry: FAST_RETRY });
    const stead = h.create();
    const run = await stead.run(talker, "talk", { pollMs: 20, graceMs: 1000 });
    expect(run.status).toBe("completed");
    expect((await stead.events({ runId: run.id })).filter((e) => e.type === "model.delta")).toEqual([]);
    expect(await follow(stead, run.id, 0)).toBe(text);
  });
});
