/**
 * Live model text for followers. While a model call streams, its text is published as
 * `model.delta` events; once the call's response is journaled, they are deleted and a
 * `model.text` marker takes their place. A follower that resumes inside that range, or comes
 * after, shows the completed text exactly once (the event stream and the CLI's LiveText): what it already showed,
 * plus the rest from the journal, is the answer, with nothing repeated and nothing missing.
 */
import { describe, expect, it } from "vitest";
import { agent, type EventView, type Stead } from "../src/index.js";
import { LiveText } from "../src/cli/live-text.js";
import { providerModel, reply } from "./helpers/provider-server.js";
import { waitUntil } from "./helpers/waiting.js";
import { agentTestKit, FAST_RETRY } from "./fixtures/agents/kit.js";

const { h, server } = agentTestKit();

/** A follower of one run's event stream, showing live text through LiveText. */
class Follower {
  shown = "";
  position: string | null = null;
  private readonly live: LiveText;

  constructor(private readonly stead: Stead, private readonly runId: string) {
    this.live = new LiveText(stead);
  }

  /** One read of at most `limit` events; what it got. */
  async read(limit = 1000): Promise<EventView[]> {
    const page = await this.stead.runs.eventsAfter(this.position, { runId: this.runId, limit });
    this.position = page.position;
    for (const raw of page.events) {
      const e = await this.live.expand(raw);
      if (e.type === "model.delta") this.shown += String(e.data.text);
      if (e.type === "model.text") this.shown += String(e.data.rest);
    }
    return page.events;
  }

  /** Reads until the run has ended and every event is read; what it showed. */
  async toEnd(): Promise<string> {
    for (;;) {
      const done = ["completed", "failed"].includes((await this.stead.runs.get(this.runId)).status);
      const got = await this.read();
      if (done && got.length === 0) return this.shown;
      await new Promise((r) => setTimeout(r, 15));
    }
  }
}

describe("live model text", () => {
  const text = Array.from({ length: 120 }, (_, i) => `word${i}`).join(" ");

  it("a follower that joins mid-stream shows the answer once: the deltas it saw, then the rest in the marker's place", async () => {
    const s = await server([reply.text(text, { chunks: 120, chunkDelayMs: 8 })]);
    const talker = agent("talker", { model: providerModel(s.url), retry: FAST_RETRY });
    const stead = h.create();
    const { id } = await stead.runs.start(talker, "talk");
    h.worker(stead, { definitions: [talker], pollMs: 20 }).start();
    await waitUntil("the first delta", async () => (await stead.runs.events({ runId: id })).find((e) => e.type === "model.delta"), { timeoutMs: 20_000 });
    expect(await new Follower(stead, id).toEnd()).toBe(text);
    expect((await stead.runs.get(id)).output).toMatchObject({ text });
  });

  it("a follower whose position is inside the text when the call is journaled shows the answer once", async () => {
    const s = await server([reply.text(text, { chunks: 120, chunkDelayMs: 8 })]);
    const talker = agent("talker", { model: providerModel(s.url), retry: FAST_RETRY });
    const stead = h.create();
    const { id } = await stead.runs.start(talker, "talk");
    h.worker(stead, { definitions: [talker], pollMs: 20 }).start();
    const f = new Follower(stead, id);
    // One event per read until the first delta: the position is then inside the streamed text.
    await waitUntil("the first delta read", async () => (await f.read(1)).some((e) => e.type === "model.delta"), { timeoutMs: 20_000 });
    const seen = f.shown;
    expect(seen.length).toBeGreaterThan(0);
    expect(text.startsWith(seen) && seen !== text).toBe(true);
    await waitUntil("the run to complete", async () => (await stead.runs.get(id)).status === "completed", { timeoutMs: 20_000 });
    // The deltas after the position are gone; the marker brings the rest, once.
    expect((await stead.runs.events({ runId: id })).filter((e) => e.type === "model.delta")).toEqual([]);
    expect(await f.toEnd()).toBe(text);
  });

  it("a follower that comes after the call was journaled gets the whole text from the marker, once", async () => {
    const s = await server([reply.text(text, { chunks: 30 })]);
    const talker = agent("talker", { model: providerModel(s.url), retry: FAST_RETRY });
    const stead = h.create();
    const run = await stead.run(talker, "talk", { pollMs: 20, graceMs: 1000 });
    expect(run.status).toBe("completed");
    expect((await stead.runs.events({ runId: run.id })).filter((e) => e.type === "model.delta")).toEqual([]);
    expect(await new Follower(stead, run.id).toEnd()).toBe(text);
  });
});
