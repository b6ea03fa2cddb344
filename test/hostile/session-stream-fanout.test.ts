/**
 * Review 2 (item 19): a session's stream gains runs (each new turn), so every new run anywhere in
 * the store woke every open session stream for a read of its own: with 1,000 session streams open,
 * starts per second fell to 0.01-0.02x of none. Session streams ride the shared reader: the hub
 * learns each new run's session from its `run.created` (or, when that names no session it can
 * trust, from one read of the run) and hands each session stream its turns' events.
 *
 * Asserted by structure on both stores: the store reads made for new runs while N session streams
 * are open do not grow with N (counted at the Stead the hub reads through, the seam
 * stream-fanout-once.test.ts uses), and over real HTTP each session stream carries every event of
 * every turn once, in the store's order, and resumes by id with no gap and no repeat, for a session
 * whose id the redactor rewrites in the events it stores too.
 */
import { afterEach, describe, expect, it } from "vitest";
import { workflow, type Stead } from "../../src/index.js";
import { StreamHub } from "../../src/server/streams/hub.js";
import { sessionSource } from "../../src/server/routes/streams.js";
import { onStore, STORE_KINDS, type OnStore } from "../helpers/both-stores.js";
import { servedStore, type Served } from "../helpers/served-store.js";
import { openSse, type SseConnection, type SseMessage } from "../helpers/sse.js";
import { waitUntil } from "../helpers/waiting.js";

const talk = workflow("fanout-talk", { version: "1" }, async (ctx, i: { text: string }) => {
  const heard = await ctx.step("hear", () => `heard ${i.text}`);
  return ctx.step("answer", () => `${heard}, answered`);
});
const parked = workflow("fanout-session-parked", { version: "1" }, async (ctx) => (await ctx.approval("go", {})).approved);
const PER_SESSION = 20;

/**
 * What a stream carried is every stored event of its runs, each once, and each run's in `seq`
 * order. Across runs the order is the commits' as the stream saw them: on Postgres two
 * transactions in flight together may show in either order, so it is not compared with a read
 * made later.
 */
function expectOnceInOrder(messages: readonly SseMessage[], stored: readonly string[]): void {
  const keys = messages.map((m) => `${m.event.runId}#${m.event.seq}`);
  expect(keys.length, "no event twice").toBe(new Set(keys).size);
  expect([...keys].sort()).toEqual([...stored].sort());
  const last = new Map<string, number>();
  for (const m of messages) {
    expect(m.event.seq, `run ${m.event.runId}'s events in seq order`).toBeGreaterThan(last.get(m.event.runId) ?? 0);
    last.set(m.event.runId, m.event.seq);
  }
}

/**
 * The Stead, with its store reads that a stream makes counted (`runs.eventsAfter`,
 * `sessions.runIds`, `runs.get`); `unreadableRuns`: `runs.get` refuses, as for a damaged row.
 */
function counting(stead: Stead, unreadableRuns = false): { stead: Stead; reads: () => number; reset: () => void } {
  let reads = 0;
  // A namespace is frozen, so a proxy may not answer for its verbs: copies with the counted ones replaced.
  const runs: Stead["runs"] = {
    ...stead.runs,
    eventsAfter: (...args) => {
      reads++;
      return stead.runs.eventsAfter(...args);
    },
    get: (runId) => {
      reads++;
      if (unreadableRuns) return Promise.reject(new Error("STEAD_DATA_TAMPERED (the test's)"));
      return stead.runs.get(runId);
    },
  };
  const sessions = {
    ...stead.sessions,
    runIds: (sessionId: string) => {
      reads++;
      return stead.sessions.runIds(sessionId);
    },
  };
  const proxy = new Proxy(stead, {
    get(target, key) {
      if (key === "runs") return runs;
      if (key === "sessions") return sessions;
      const v = Reflect.get(target, key, target) as unknown;
      return typeof v === "function" ? (v as (...args: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { stead: proxy, reads: () => reads, reset: () => (reads = 0) };
}

/** A stream's body read in the background as a client would: its text so far. */
function drain(body: ReadableStream<Uint8Array>): { text: () => string } {
  let text = "";
  const reader = body.getReader();
  const decoder = new TextDecoder();
  void (async () => {
    for (;;) {
      const r = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (r.done) return;
      text += decoder.decode(r.value);
    }
  })();
  return { text: () => text };
}

describe.each(STORE_KINDS)("session streams on %s", (kind) => {
  let s: OnStore | undefined;
  let hub: StreamHub | undefined;
  let served: Served | undefined;
  afterEach(async () => {
    await hub?.close();
    await s?.cleanup();
    await served?.close();
    hub = undefined;
    s = undefined;
    served = undefined;
  });

  it(`${2 * PER_SESSION} open session streams: a new run costs the store reads it costs with none, not one per stream`, async () => {
    s = await onStore(kind, "session-fanout");
    const stead = s.stead;
    const first = { a: (await stead.session(talk, "chat-a").send({ text: "hello" })).runId, b: (await stead.session(talk, "chat-b").send({ text: "hello" })).runId };
    const counted = counting(stead);
    // No poll in the test's time: the store is read when the hub is woken, as after a POST.
    hub = new StreamHub(counted.stead, { pollMs: 600_000 });
    const a: ReturnType<typeof drain>[] = [];
    const b: ReturnType<typeof drain>[] = [];
    for (let i = 0; i < PER_SESSION; i++) {
      for (const [session, into] of [["chat-a", a], ["chat-b", b]] as const) {
        const body = await hub.open(sessionSource(counted.stead, session), null);
        if (body === null) throw new Error("the hub answered no stream");
        into.push(drain(body));
      }
    }
    // A whole-store stream: once it carries the new runs, the hub has read them and handed them out.
    const whole = await hub.open({ runIds: () => Promise.resolve(null), start: "now" }, null);
    if (whole === null) throw new Error("the hub answered no stream");
    const all = drain(whole);
    await waitUntil("every session stream's first turn", () => a.every((x) => x.text().includes(first.a)) && b.every((x) => x.text().includes(first.b)));
    const settled = async () => {
      // Reads that a page woke start right after it is handed out: long enough for them to be counted.
      let before = -1;
      while (before !== counted.reads()) {
        before = counted.reads();
        await new Promise((r) => setTimeout(r, 300));
      }
    };
    await settled();

    counted.reset();
    const outside: string[] = [];
    for (let i = 0; i < 5; i++) outside.push((await stead.runs.start(parked, {})).id);
    hub.wake();
    await waitUntil("the whole-store stream to carry the five runs", () => outside.every((id) => all.text().includes(id)));
    await settled();
    // The hub's read (and its empty read that ends the page): none per session stream (it was 3 per stream, 120).
    expect(counted.reads(), "store reads for five runs outside any session").toBeLessThanOrEqual(3);
    for (const x of [...a, ...b]) for (const id of outside) expect(x.text()).not.toContain(id);

    counted.reset();
    const turn = (await stead.session(talk, "chat-a").send({ text: "again" })).runId;
    hub.wake();
    await waitUntil("chat-a's streams to carry its new turn", () => a.every((x) => x.text().includes(turn)));
    await settled();
    // None for the other session's streams. On SQLite a caught-up stream stands at a position the
    // shared reader passed, so it is live and reads nothing. On Postgres a position is a snapshot
    // of the whole cluster: while other databases' transactions move it, a stream whose own read
    // ended at a snapshot the shared reader never saw stays reading, and reads for its own
    // session's events (3 reads: its turns, the page, its turns again).
    expect(counted.reads(), "store reads for a new turn of one session").toBeLessThanOrEqual(kind === "sqlite" ? 3 : 3 + 3 * PER_SESSION);
    for (const x of b) expect(x.text()).not.toContain(turn);
    for (const x of a) expect(x.text().split(`"runId":"${turn}"`).length - 1, "the new turn's events, once").toBe(1);
  });

  it("a new turn whose session neither its run.created nor its row gives: session streams read on their own, and carry it once", async () => {
    s = await onStore(kind, "session-unplaced");
    const stead = s.stead;
    const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    await stead.session(talk, token).send({ text: "one" });
    await stead.session(talk, "chat-a").send({ text: "one" });
    const counted = counting(stead, true);
    hub = new StreamHub(counted.stead, { pollMs: 600_000 });
    const open = async (session: string) => {
      const body = await hub?.open(sessionSource(counted.stead, session), null);
      if (!body) throw new Error("the hub answered no stream");
      return drain(body);
    };
    const mine = [await open(token), await open(token)];
    const other = await open("chat-a");
    const whole = await hub.open({ runIds: () => Promise.resolve(null), start: "now" }, null);
    if (whole === null) throw new Error("the hub answered no stream");
    const all = drain(whole);
    const turns = (id: string) => stead.sessions.runIds(id);
    await waitUntil("the first turns", () => mine.every((x) => x.text().includes("run.created")) && other.text().includes("run.created"));
    // A position the shared reader passed just before the turn: the id of the event it sent last.
    const before = (await stead.runs.start(parked, {})).id;
    hub.wake();
    await waitUntil("the whole-store stream to carry a run", () => all.text().includes(before));
    const began = [...all.text().matchAll(/^id: (.+)$/gm)].at(-1)?.[1] as string;
    const turn = (await stead.session(talk, token).send({ text: "two" })).runId;
    const outside = (await stead.runs.start(parked, {})).id;
    const next = (await stead.session(talk, "chat-a").send({ text: "two" })).runId;
    hub.wake();
    await waitUntil("the whole-store stream to carry the three runs", () => [turn, outside, next].every((id) => all.text().includes(id)));
    await waitUntil("the token-shaped session's streams to carry its new turn", () => mine.every((x) => x.text().includes(turn)));
    await waitUntil("chat-a's stream to carry its new turn", () => other.text().includes(next));
    const carried = (x: { text: () => string }) => [...x.text().matchAll(/"seq":(\d+),"runId":"([^"]+)"/g)].map((m) => `${m[2]}#${m[1]}`);
    const stored = async (id: string) => (await stead.runs.eventsAfter(null, { runIds: await turns(id) })).events.map((e) => `${e.runId}#${e.seq}`);
    for (const x of mine) expect(carried(x)).toEqual(await stored(token));
    expect(carried(other)).toEqual(await stored("chat-a"));
    // Resumed from before that turn, where the shared reader has been: it joins at once, meets the
    // turn it cannot place among what it is handed, and reads it on its own.
    const resumed = await hub.open(sessionSource(counted.stead, token), began);
    if (resumed === null) throw new Error("the hub answered no stream");
    const rest = drain(resumed);
    const after = (await stead.runs.eventsAfter(null, { runIds: [turn] })).events.map((e) => `${e.runId}#${e.seq}`);
    await waitUntil("the resumed stream to carry the turn", () => carried(rest).length >= after.length);
    expect(carried(rest)).toEqual(after);
    // Settled by reads of their own that end: each stream read a few times, not without end.
    counted.reset();
    await new Promise((r) => setTimeout(r, 500));
    expect(counted.reads()).toBe(0);
  });

  it("each session stream carries every turn's events once, in order, and resumes by id; a session id the redactor rewrites too", async () => {
    served = await servedStore(kind, "session-stream-turns", { streams: { pollMs: 20 } });
    const stead = served.s.stead;
    const api = `${served.server.url}/api/v1`;
    // A session id in a GitHub token's shape: its run.created events store it redacted.
    const sessions = ["chat-x", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"];
    for (const id of sessions) await stead.session(talk, id).send({ text: "one" });
    const streams = new Map<string, SseConnection[]>();
    for (const id of sessions) streams.set(id, await Promise.all([0, 1, 2].map(() => openSse(`${api}/sessions/${id}/stream`))));
    const worker = stead.worker({ definitions: [talk, parked], pollMs: 20 });
    worker.start();
    try {
      for (let round = 0; round < 3; round++) {
        await stead.runs.start(parked, {});
        for (const id of sessions) await stead.session(talk, id).send({ text: `turn ${round}` });
      }
      for (const id of sessions) {
        const turns = await stead.sessions.runIds(id);
        expect(turns).toHaveLength(4);
        for (const t of turns) await stead.runs.waitFor(t);
        const stored = (await served.s.rows(`SELECT seq, run_id FROM events WHERE run_id IN (${turns.map(() => "?").join(", ")})`, ...turns)).map((r) => `${String(r.run_id)}#${Number(r.seq)}`);
        // The case holds: the token-shaped id is not in its turns' run.created as written.
        for (const e of (await stead.runs.eventsAfter(null, { runIds: turns, limit: 500 })).events) if (e.type === "run.created") expect(e.data.session === id).toBe(id === "chat-x");
        for (const c of streams.get(id) ?? []) {
          await c.waitFor(`session ${id}'s ${stored.length} events`, (x) => x.messages.length >= stored.length);
          await new Promise((r) => setTimeout(r, 100));
          expectOnceInOrder(c.messages, stored);
        }
        // Resumed after its sixth event: the rest, none of the six again.
        const one = (streams.get(id) ?? [])[0] as SseConnection;
        const cut = one.messages[5]?.id as string;
        const rest = await openSse(`${api}/sessions/${id}/stream`, { "last-event-id": cut });
        await rest.waitFor("the rest", (x) => x.messages.length >= stored.length - 6);
        await new Promise((r) => setTimeout(r, 100));
        expectOnceInOrder([...one.messages.slice(0, 6), ...rest.messages], stored);
      }
    } finally {
      for (const list of streams.values()) for (const c of list) c.close();
      await worker.stop();
    }
  }, 120_000);
});
