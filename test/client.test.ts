/**
 * The typed client (`stead/client`) against a real server on 127.0.0.1: reads, a control
 * command, refusals as SteadClientError, and a live event iterator that outlives the server
 * being stopped and started again on the same port. What it got is compared with the store's
 * own event rows.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createClient, SteadClientError, type DefinitionView, type RunFilter, type StreamedEvent } from "../src/client/index.js";
import type { runListing } from "../src/server/listing-query.js";
import { agent, lastUserText, scriptedModel, workflow } from "../src/index.js";
import { tokensOf } from "../src/server/auth.js";
import { listen, type Listening } from "../src/server/listen.js";
import { onStore, type OnStore } from "./helpers/both-stores.js";
import { tempDir } from "./helpers/temp-store.js";

// The client declares the listing's fields itself (it imports nothing of Stead): the type checker
// holds them to the server's query schema, so a field added to one and not the other fails here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const listingFieldsAgree: Same<keyof RunFilter, keyof z.input<typeof runListing>> = true;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});

async function setUp(label: string): Promise<{ s: OnStore; server: Listening; operator: string; viewer: string; log: string }> {
  const s = await onStore("sqlite", label);
  const d = tempDir(`stead-${label}-`);
  cleanups.push(() => s.cleanup(), () => d.remove());
  const operator = (await s.stead.tokens.create({ name: "olivia", role: "operator" })).token;
  const viewer = (await s.stead.tokens.create({ name: "victor", role: "viewer" })).token;
  const server = await listen({ stead: s.stead, authenticate: tokensOf(s.stead), port: 0 });
  cleanups.push(() => server.close(1_000));
  return { s, server, operator, viewer, log: join(d.dir, "effects.log") };
}

const storedEvents = async (s: OnStore, runId: string) =>
  (await s.rows("SELECT seq, type FROM events WHERE run_id = ? ORDER BY seq", runId)).map((r) => ({ seq: Number(r.seq), type: String(r.type) }));

describe("stead/client", () => {
  it("lists runs, approves a wait as the token's name, and throws refusals with their code, status and fix", async () => {
    const { s, server, operator, viewer, log } = await setUp("client-reads");
    const shipped = workflow("client-ship", { version: "1" }, async (ctx, input: { item: string }) => {
      const d = await ctx.approval("ship", { item: input.item });
      return ctx.step("ship-it", () => {
        appendFileSync(log, `${input.item} ${d.approved ? "shipped" : "kept"} by ${d.by}\n`);
        return d.approved;
      });
    });
    const run = await s.stead.run(shipped, { item: "parcel" }, { followTimersMs: 0 });
    expect(run.status).toBe("waiting");

    const client = createClient({ url: server.url, token: operator });
    const listed = await client.runs.list({ status: ["waiting"] });
    expect(listed.runs.map((r) => r.id)).toEqual([run.id]);
    expect(listed.nextCursor).toBeNull();
    expect((await client.runs.get(run.id)).run.status).toBe("waiting");

    const approved = await client.runs.approve(run.id, "ship", { reason: "fine", idempotencyKey: "k-1" });
    expect(approved.already).toBe(false);
    expect((await client.runs.approve(run.id, "ship", { reason: "fine", idempotencyKey: "k-1" })).already).toBe(true);
    await s.stead.runs.follow(run.id, [shipped], { followTimersMs: 0 });
    expect(readFileSync(log, "utf8")).toBe("parcel shipped by olivia\n");

    const missing = await client.runs.get("no-such-run").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(SteadClientError);
    expect(missing).toMatchObject({ code: "STEAD_RUN_NOT_FOUND", status: 404, fix: expect.any(String) as unknown });
    const forbidden = await createClient({ url: server.url, token: viewer })
      .runs.cancel(run.id)
      .catch((e: unknown) => e);
    expect(forbidden).toMatchObject({ code: "STEAD_NOT_PERMITTED", status: 403 });
    const anonymous = await createClient({ url: server.url })
      .runs.pause(run.id)
      .catch((e: unknown) => e);
    expect(anonymous).toMatchObject({ code: "STEAD_TOKEN_REFUSED", status: 401 });
    expect(() => createClient({ url: server.url, token: "has spaces" })).toThrow(SteadClientError);
  });

  it("the console's reads: me, a journal page, a run without its journal, open waits by kind, the tally", async () => {
    const { s, server, operator, viewer } = await setUp("client-console-reads");
    const long = workflow("client-long", async (ctx) => {
      for (let i = 0; i < 7; i++) await ctx.step(`step-${i}`, () => i);
      return ctx.approval("done", { steps: 7 });
    });
    const hears = workflow("client-hears", async (ctx) => ctx.signal("go"));
    const run = await s.stead.run(long, null, { followTimersMs: 0 });
    const other = await s.stead.run(hears, null, { followTimersMs: 0 });
    const client = createClient({ url: server.url, token: viewer });

    expect(await client.me()).toEqual({ name: "victor", role: "viewer", actions: ["runs.read", "events.read", "sessions.read", "workspace.read", "definitions.read", "metrics.read"] });
    expect((await createClient({ url: server.url, token: operator }).me()).actions).toContain("waits.approve");
    expect(await createClient({ url: server.url }).me()).toMatchObject({ name: null, role: null });

    const stored = (await s.rows("SELECT step_id FROM steps WHERE run_id = ? ORDER BY seq", run.id)).map((r) => String(r.step_id));
    const page = await client.runs.journal(run.id, { offset: 2, limit: 3 });
    expect({ ids: page.steps.map((x) => x.id), total: page.total, offset: page.offset }).toEqual({ ids: stored.slice(2, 5), total: stored.length, offset: 2 });
    expect((await client.runs.journal(run.id)).steps).toHaveLength(stored.length);
    const light = await client.runs.get(run.id, { journal: false });
    expect(light.journalLength).toBe(stored.length);
    expect(light).not.toHaveProperty("journal");
    expect((await client.runs.get(run.id)).journal).toHaveLength(stored.length);

    const approvals = await client.waits.list({ kind: "approval" });
    expect(approvals).toMatchObject({ truncated: false, waits: [{ runId: run.id, name: "done", kind: "approval", definition: "client-long", request: { steps: 7 } }] });
    expect(approvals.waits).toHaveLength(1);
    expect((await client.waits.list()).waits.map((w) => w.runId).sort()).toEqual([run.id, other.id].sort());
    expect((await client.waits.list({ limit: 1 })).waits).toHaveLength(1);

    expect(await client.tally()).toEqual({ runs: { waiting: 2 }, openWaits: { approval: 1, signal: 1 }, openHolds: {} });

    const bad = await client.runs.journal(run.id, { limit: 5000 }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ code: "STEAD_BAD_OPTION", status: 400 });
  });

  it("declares the run listing's fields as the server's query schema does", () => {
    expect(listingFieldsAgree).toBe(true);
  });

  it("starts a run by definition name once per key, walks every run page by page, and lists what workers serve", async () => {
    const { s, server, operator, log } = await setUp("client-start");
    const fixer = workflow("client-fixer", { version: "1", input: z.object({ issue: z.string().min(1) }) }, async (ctx, input) =>
      ctx.step("fix", () => {
        appendFileSync(log, `fixed ${input.issue}\n`);
        return input.issue;
      }),
    );
    const worker = s.stead.worker({ definitions: [fixer], pollMs: 20 });
    worker.start();
    cleanups.push(() => worker.stop());
    const client = createClient({ url: server.url, token: operator });
    let listed: DefinitionView[] = [];
    for (let i = 0; i < 200 && !listed.some((d) => d.name === "client-fixer"); i++) {
      listed = (await client.definitions.list()).definitions;
      if (!listed.some((d) => d.name === "client-fixer")) await new Promise((r) => setTimeout(r, 50));
    }
    expect(listed.map((d) => d.name)).toContain("client-fixer");
    expect((await client.definitions.workers()).workers.map((w) => w.workerId)).toContain(worker.owner.workerId);

    const first = await client.runs.start("client-fixer", { issue: "door" }, { idempotencyKey: "ticket-42" });
    const again = await client.runs.start("client-fixer", { issue: "door" }, { idempotencyKey: "ticket-42" });
    expect(again.id).toBe(first.id);
    const bad = await client.runs.start("client-fixer", { issue: "" }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ code: "STEAD_SCHEMA_MISMATCH", status: 422 });
    await s.stead.runs.waitFor(first.id, { until: (r) => r.status === "completed", timeoutMs: 20_000, pollMs: 20 });
    expect(readFileSync(log, "utf8")).toBe("fixed door\n");

    for (let i = 0; i < 4; i++) await s.stead.runs.start(fixer, { issue: `i-${i}` });
    const walked: string[] = [];
    for await (const r of client.runs.all({ limit: 2, order: "asc" })) walked.push(r.id);
    const rows = (await s.rows("SELECT id FROM runs ORDER BY created_at, id")).map((r) => String(r.id));
    expect(walked).toEqual(rows);
    expect(walked).toHaveLength(5);
  });

  it("sessions: list, get, send a message as the next turn by the token's name, its events live, and the transcript", async () => {
    const { s, server, operator } = await setUp("client-sessions");
    const chat = agent("client-chat", { model: scriptedModel({ respond: (prompt) => ({ text: `ANSWER to ${lastUserText(prompt)}` }) }), instructions: "Be brief." });
    await s.stead.session(chat, "desk-1").send("hello");
    const client = createClient({ url: server.url, token: operator });
    expect((await client.sessions.list()).sessions.map((x) => x.id)).toEqual(["desk-1"]);
    expect(await client.sessions.get("desk-1")).toBeTruthy();
    const sent = await client.sessions.send("desk-1", "and then?", { idempotencyKey: "m-1" });
    expect(sent).toMatchObject({ already: false, turn: 2 });
    expect(await client.sessions.send("desk-1", "and then?", { idempotencyKey: "m-1" })).toMatchObject({ already: true, runId: sent.runId });
    const rows = await s.rows("SELECT id, turn FROM runs WHERE session_id = ? ORDER BY turn", "desk-1");
    expect(rows.map((r) => Number(r.turn))).toEqual([1, 2]);
    const created = await s.rows("SELECT data FROM events WHERE run_id = ? AND type = 'run.created'", String(sent.runId));
    expect(created.map((r) => (JSON.parse(String(r.data)) as { by?: unknown }).by)).toEqual(["olivia"]);
    const worker = s.stead.worker({ definitions: [chat], pollMs: 20 });
    worker.start();
    cleanups.push(() => worker.stop());
    const got: StreamedEvent[] = [];
    for await (const e of client.sessions.events("desk-1")) {
      got.push(e);
      if (e.type === "run.completed" && e.runId === sent.runId) break;
    }
    const stored = (await s.rows("SELECT seq, type FROM events WHERE run_id IN (?, ?) ORDER BY seq", String(rows[0]?.id), String(rows[1]?.id))).map((r) => ({ seq: Number(r.seq), type: String(r.type) }));
    expect(got.map((e) => ({ seq: e.seq, type: e.type }))).toEqual(stored);
    expect(JSON.stringify(await client.sessions.transcript("desk-1"))).toContain("ANSWER to and then?");
    const unknown = await client.sessions.transcript("nobody").catch((e: unknown) => e);
    expect(unknown).toMatchObject({ code: "STEAD_SESSION_NOT_FOUND", status: 404 });
  });

  it("events: a live iterator that survives the server stopping and starting again on the same port, every event once, in order", async () => {
    const { s, server, viewer } = await setUp("client-events");
    const steps = workflow("client-steps", { version: "1" }, async (ctx, input: { n: number }) => {
      for (let i = 0; i < input.n; i++) await ctx.step(`s${i}`, () => i);
      return input.n;
    });
    const { id } = await s.stead.runs.start(steps, { n: 30 });
    const client = createClient({ url: server.url, token: viewer });
    const got: StreamedEvent[] = [];
    const abort = new AbortController();
    cleanups.push(() => abort.abort());
    let current: Listening = server;
    const worker = s.stead.worker({ definitions: [steps], pollMs: 20 });
    cleanups.push(() => worker.stop());
    worker.start();
    const reading = (async () => {
      for await (const e of client.runs.events(id, { signal: abort.signal, retryMs: 50 })) {
        got.push(e);
        if (got.length === 5) {
          // The server goes away mid-run and comes back on the same port while the run goes on.
          await current.close(1_000);
          await s.stead.runs.waitFor(id, { until: (r) => r.status === "completed", timeoutMs: 30_000 });
          current = await listen({ stead: s.stead, authenticate: tokensOf(s.stead), port: server.port });
          cleanups.push(() => current.close(1_000));
        }
        if (e.type === "run.completed") break;
      }
    })();
    await reading;
    const stored = await storedEvents(s, id);
    expect(got.map((e) => ({ seq: e.seq, type: e.type }))).toEqual(stored);
    expect(stored.length).toBeGreaterThan(30);
  });

  it("events: tells the caller once per change when the stream is answered, lost while the server is away, and answered again", async () => {
    const { s, server, operator } = await setUp("client-connection");
    const parked = workflow("client-parked", { version: "1" }, async (ctx) => (await ctx.approval("go", {})).approved);
    const run = await s.stead.run(parked, {}, { followTimersMs: 0 });
    const client = createClient({ url: server.url, token: operator });
    const states: string[] = [];
    const types: string[] = [];
    const abort = new AbortController();
    cleanups.push(() => abort.abort());
    const reading = (async () => {
      for await (const e of client.runs.events(run.id, { signal: abort.signal, retryMs: 50, maxRetryMs: 200, onConnection: (c) => states.push(c) })) {
        types.push(e.type);
        if (e.type === "run.completed") break;
      }
    })();
    const until = async (what: string, ok: () => boolean) => {
      for (const deadline = Date.now() + 20_000; !ok(); await new Promise((r) => setTimeout(r, 20))) if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    };
    await until("the stream to open", () => states.includes("open") && types.includes("run.waiting"));
    await server.close(1_000);
    await until("the loss to be told", () => states.includes("lost"));
    const again = await listen({ stead: s.stead, authenticate: tokensOf(s.stead), port: server.port });
    cleanups.push(() => again.close(1_000));
    await until("the stream to open again", () => states.length === 3);
    const worker = s.stead.worker({ definitions: [parked], pollMs: 20 });
    cleanups.push(() => worker.stop());
    worker.start();
    await client.runs.approve(run.id, "go");
    await reading;
    expect(states).toEqual(["open", "lost", "open"]);
    expect(types.filter((t) => t === "run.completed")).toHaveLength(1);
  });

  it("events: resumes after a given position, and the whole store's stream carries a run's events", async () => {
    const { s, server } = await setUp("client-after");
    const one = workflow("client-one", { version: "1" }, async (ctx) => ctx.step("only", () => 1));
    const run = await s.stead.run(one, {}, { followTimersMs: 0 });
    const client = createClient({ url: server.url });
    const first: StreamedEvent[] = [];
    // The whole store's stream from its first event (given no position, it starts now).
    for await (const e of client.events({ after: "0" })) {
      first.push(e);
      if (e.type === "run.completed" && e.runId === run.id) break;
    }
    const stored = await storedEvents(s, run.id);
    expect(first.filter((e) => e.runId === run.id).map((e) => ({ seq: e.seq, type: e.type }))).toEqual(stored);
    const after: StreamedEvent[] = [];
    const cut = first[1];
    expect(cut).toBeDefined();
    for await (const e of client.runs.events(run.id, { after: (cut as StreamedEvent).position })) {
      after.push(e);
      if (e.type === "run.completed") break;
    }
    expect(after.map((e) => e.seq)).toEqual(stored.slice(2).map((e) => e.seq));
    // The stream's end now (GET /events/position): a stream from it carries only what is written next.
    const { position } = (await (await fetch(`${server.url}/api/v1/events/position`)).json()) as { position: string };
    const next = await s.stead.run(one, {}, { followTimersMs: 0 });
    const fromNow: StreamedEvent[] = [];
    for await (const e of client.events({ after: position })) {
      fromNow.push(e);
      if (e.type === "run.completed") break;
    }
    expect(fromNow.map((e) => ({ seq: e.seq, type: e.type }))).toEqual(await storedEvents(s, next.id));
    const refused = await (async () => {
      for await (const e of client.runs.events("no-such-run")) return e;
    })().catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "STEAD_RUN_NOT_FOUND", status: 404 });
  });
});
