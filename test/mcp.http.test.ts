/**
 * The MCP server at /mcp of a real `listen()`ed server on 127.0.0.1, on both stores, through the
 * SDK's own client over streamable HTTP: the tools and their schemas, reads, an approval with
 * edited arguments recorded as the token's name (asserted from the store's rows and the tool's
 * side effect), a malformed-arguments sweep over every tool, and who may call what.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { agent, scriptedModel, tool, toolResults, workflow } from "../src/index.js";
import type { Listening } from "../src/server/listen.js";
import { digestStore } from "../src/store/transfer/index.js";
import { STORE_KINDS, type OnStore } from "./helpers/both-stores.js";
import { servedStore, type Served } from "./helpers/served-store.js";
import { call, malformedArguments, ok, refused, type ListedTool } from "./helpers/mcp.js";

/** Tools that only read; every other tool needs an operator. */
const READS = ["list_runs", "get_run", "why", "run_events", "list_holds", "list_sessions", "session_transcript", "list_snapshots", "diff_snapshots", "restore_snapshot", "definitions"];

describe.each(STORE_KINDS)("the MCP server over streamable HTTP on %s", (kind) => {
  let s: OnStore;
  let server: Listening;
  let log: string;
  let served: Served;
  const tokens = { operator: "", viewer: "" };
  const clients: Client[] = [];

  const shipped = workflow("mcp-ship", { version: "1" }, async (ctx, input: { item: string }) => {
    await ctx.step("prepare", () => `prepared ${input.item}`);
    const d = await ctx.approval("ship", { item: input.item });
    return ctx.step("ship-it", () => {
      appendFileSync(log, `${input.item} ${d.approved ? "shipped" : "kept"} by ${d.by}\n`);
      return d.approved;
    });
  });

  const deployer = agent("mcp-deployer", {
    model: scriptedModel({ respond: (prompt) => (toolResults(prompt).length === 0 ? { toolCalls: [{ id: "c1", name: "deploy", input: { env: "prod" } }] } : { text: "deployment handled" }) }),
    tools: {
      deploy: tool({
        description: "Deploy the service",
        input: z.object({ env: z.enum(["staging", "prod"]) }),
        needsApproval: true,
        run: (i) => {
          appendFileSync(log, `deployed to ${i.env}\n`);
          return `deployed to ${i.env}`;
        },
      }),
    },
  });

  beforeAll(async () => {
    served = await servedStore(kind, "mcp-http");
    ({ s, server, log } = served);
    Object.assign(tokens, served.tokens);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await served.close();
  });

  async function connect(token?: string): Promise<Client> {
    const client = new Client({ name: "stead-test", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {});
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  async function parked(item: string): Promise<string> {
    const run = await s.stead.run(shipped, { item }, { followTimersMs: 0 });
    expect(run.status).toBe("waiting");
    return run.id;
  }

  /** A token's last use is marked at most once a minute: mark it now, so a digest after shows any other write. */
  const markUse = async (c: Client) => expect((await call(c, "list_runs", {})).isError).toBe(false);

  it("lists one tool per verb, each with a description, input and output schemas, and annotations", async () => {
    const c = await connect(tokens.operator);
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...READS, "start", "approve", "deny", "signal", "release", "pause", "resume", "cancel", "retry", "fork", "send"].sort());
    for (const t of tools) {
      expect({ name: t.name, input: t.inputSchema.type, output: t.outputSchema?.type }).toEqual({ name: t.name, input: "object", output: "object" });
      expect(t.description?.length, t.name).toBeGreaterThan(40);
      expect(t.annotations?.readOnlyHint, t.name).toBe(READS.includes(t.name));
      if (!READS.includes(t.name)) expect(Object.keys(t.inputSchema.properties ?? {}), t.name).toContain("idempotencyKey");
    }
    // Over HTTP nothing is written on the server's disk: restore takes no target directory.
    expect(Object.keys(tools.find((t) => t.name === "restore_snapshot")?.inputSchema.properties ?? {})).not.toContain("to");
  });

  it("reads: the list, a run in full with why's ways out as tool calls, events after a sequence number, and the run as a resource", async () => {
    const id = await parked("box");
    const c = await connect(tokens.viewer);
    const list = await ok<{ runs: { id: string }[]; total: number }>(c, "list_runs", { status: ["waiting"], definition: "mcp-ship" });
    expect(list.runs.map((r) => r.id)).toContain(id);
    expect(list.total).toBe(Number((await s.rows("SELECT COUNT(*) AS n FROM runs WHERE status = 'waiting' AND definition = 'mcp-ship'"))[0]?.n));

    const full = await ok<{ run: { id: string; status: string }; journal: { id: string }[]; waits: { name: string; status: string }[]; why: { waysOut: unknown[] } }>(c, "get_run", { runId: id });
    expect(full.run).toMatchObject({ id, status: "waiting" });
    expect(full.journal.map((j) => j.id)).toEqual(["prepare", "ship"]);
    expect(full.waits).toMatchObject([{ name: "ship", status: "open" }]);
    const why = await ok<{ text: string; waysOut: { tool: string | null; arguments: Record<string, unknown>; supply: string[] }[] }>(c, "why", { runId: id });
    expect(why.text).toContain("ship");
    expect(why.waysOut).toEqual(
      expect.arrayContaining([
        { what: 'approve "ship"', tool: "approve", arguments: { runId: id, wait: "ship" }, supply: [] },
        { what: 'deny "ship"', tool: "deny", arguments: { runId: id, wait: "ship" }, supply: ["reason"] },
        { what: "cancel it", tool: "cancel", arguments: { runId: id }, supply: [] },
      ]),
    );

    const rows = await s.rows("SELECT seq, type FROM events WHERE run_id = ? ORDER BY seq", id);
    const first = await ok<{ events: { seq: number; type: string }[]; last: number }>(c, "run_events", { runId: id, limit: 2 });
    expect(first.events.map((e) => [e.seq, e.type])).toEqual(rows.slice(0, 2).map((r) => [Number(r.seq), r.type]));
    const rest = await ok<{ events: { seq: number }[]; last: number }>(c, "run_events", { runId: id, after: first.last });
    expect(rest.events.map((e) => e.seq)).toEqual(rows.slice(2).map((r) => Number(r.seq)));

    const { resources } = await c.listResources();
    expect(resources.map((r) => r.uri)).toContain(`stead://runs/${id}`);
    const read = await c.readResource({ uri: `stead://runs/${id}` });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({ run: { id, status: "waiting" }, waits: [{ name: "ship" }] });
    await expect(c.readResource({ uri: "stead://runs/no-such-run" })).rejects.toThrow(/STEAD_RUN_NOT_FOUND/);
  });

  it("an approval through MCP resumes the run, recorded as the token's name; the same key again changes nothing", async () => {
    const id = await parked("parcel");
    const c = await connect(tokens.operator);
    const args = { runId: id, wait: "ship", reason: "looks right", idempotencyKey: "ticket-42" };
    expect(await ok(c, "approve", args)).toMatchObject({ runId: id, wait: "ship", approved: true, by: "olivia", already: false });
    expect(await ok(c, "approve", args)).toMatchObject({ approved: true, by: "olivia", already: true });
    expect(await s.rows("SELECT resolved_by FROM waits WHERE run_id = ? AND name = 'ship'", id)).toEqual([{ resolved_by: "olivia" }]);
    expect(await s.rows("SELECT verb, key, actor FROM idempotency_keys WHERE scope = ?", id)).toEqual([{ verb: "approve", key: "ticket-42", actor: "olivia" }]);
    expect((await s.stead.runs.follow(id, [shipped], { followTimersMs: 0 })).status).toBe("completed");
    expect(readFileSync(log, "utf8")).toContain("parcel shipped by olivia\n");
  });

  it("send queues a session's next turn through MCP, recorded as the token's name; the same key again changes nothing", async () => {
    const chat = workflow("mcp-chat", { version: "1" }, (_ctx, text: string) => `heard ${text}`);
    await s.stead.session(chat, "mcp-session").send("first");
    const c = await connect(tokens.operator);
    const args = { session: "mcp-session", text: "second", idempotencyKey: "msg-7" };
    const first = await ok<{ runId: string; turn: number; already: boolean }>(c, "send", args);
    expect(first).toMatchObject({ turn: 2, already: false });
    expect(await ok(c, "send", args)).toMatchObject({ runId: first.runId, turn: 2, already: true });
    const rows = await s.rows("SELECT id, turn, definition FROM runs WHERE session_id = ? ORDER BY turn", "mcp-session");
    expect(rows.map((r) => [Number(r.turn), r.definition])).toEqual([
      [1, "mcp-chat"],
      [2, "mcp-chat"],
    ]);
    expect(rows[1]?.id).toBe(first.runId);
    const [created] = await s.rows("SELECT data FROM events WHERE run_id = ? AND type = 'run.created'", first.runId);
    expect(JSON.parse(String(created?.data))).toMatchObject({ session: "mcp-session", by: "olivia" });
    expect(await refused(c, "send", { session: "no-such-session", text: "hi" })).toMatchObject({ code: "STEAD_SESSION_NOT_FOUND" });
  });

  it("a tool call approved with edited arguments for the rest of the run: the tool runs with the edit", async () => {
    const run = await s.stead.run(deployer, "ship the release", { followTimersMs: 0 });
    expect(run.status).toBe("waiting");
    const c = await connect(tokens.operator);
    const why = await ok<{ waysOut: { tool: string | null; arguments: Record<string, unknown>; supply: string[] }[] }>(c, "why", { runId: run.id });
    expect(why.waysOut).toEqual(expect.arrayContaining([expect.objectContaining({ tool: "approve", arguments: { runId: run.id, wait: "approve:c1" }, supply: ["input"] })]));
    expect(await refused(c, "approve", { runId: run.id, wait: "approve:c1", input: { env: "moon" } })).toMatchObject({ code: "STEAD_SCHEMA_MISMATCH" });
    expect(await ok(c, "approve", { runId: run.id, wait: "approve:c1", input: { env: "staging" }, scope: "run" })).toMatchObject({ approved: true, by: "olivia" });
    const [wait] = await s.rows("SELECT resolved_by, result FROM waits WHERE run_id = ? AND name = 'approve:c1'", run.id);
    expect(wait?.resolved_by).toBe("olivia");
    expect(JSON.parse(String(wait?.result))).toMatchObject({ approved: true, by: "olivia", scope: "run" });
    expect(String(wait?.result)).toContain("staging");
    expect((await s.stead.runs.follow(run.id, [deployer], { followTimersMs: 0 })).status).toBe("completed");
    expect(readFileSync(log, "utf8")).toContain("deployed to staging\n");
    expect(readFileSync(log, "utf8")).not.toContain("deployed to prod");
  });

  it("every tool refuses malformed arguments, unknown ids and a wrong state with a clear error, and nothing in the store changes", async () => {
    const id = await parked("crate");
    const c = await connect(tokens.operator);
    await markUse(c);
    const { tools } = await c.listTools();
    const valid: Record<string, Record<string, unknown>> = {
      list_runs: { status: ["waiting"], limit: 5 },
      get_run: { runId: id },
      why: { runId: id },
      run_events: { runId: id, after: 0 },
      list_holds: { runId: id, open: true },
      list_sessions: { limit: 5 },
      session_transcript: { session: "support-1" },
      list_snapshots: { runId: id },
      diff_snapshots: { runId: id, from: "start", to: "prepare" },
      restore_snapshot: { runId: id, seq: -1, paths: ["src"], content: true, maxBytes: 10 },
      approve: { runId: id, wait: "ship", reason: "ok", scope: "once", idempotencyKey: "k-1" },
      deny: { runId: id, wait: "ship", reason: "no", idempotencyKey: "k-2" },
      signal: { runId: id, wait: "ship", payload: 1, idempotencyKey: "k-3" },
      release: { runId: id, hold: "process_failed", choice: "retry", idempotencyKey: "k-4" },
      pause: { runId: id, idempotencyKey: "k-5" },
      resume: { runId: id, acceptChange: true, idempotencyKey: "k-6" },
      cancel: { runId: id, reason: "stop", idempotencyKey: "k-7" },
      retry: { runId: id, idempotencyKey: "k-8" },
      fork: { runId: id, at: "prepare", id: "fork-1", idempotencyKey: "k-9" },
      send: { session: "support-1", text: "hello", idempotencyKey: "k-10" },
      definitions: { name: "mcp-ship" },
      start: { definition: "mcp-ship", input: { item: "x" }, id: "start-1", idempotencyKey: "k-11" },
    };
    expect(Object.keys(valid).sort()).toEqual(tools.map((t) => t.name).sort());
    const before = await digestStore(s.stead.store);

    let swept = 0;
    for (const t of tools as ListedTool[]) {
      for (const [label, args] of malformedArguments(t, valid[t.name] ?? {})) {
        const r = await call(c, t.name, args);
        expect({ tool: t.name, label, isError: r.isError }).toEqual({ tool: t.name, label, isError: true });
        expect(r.text, `${t.name} ${label}`).toMatch(/Input validation error: Invalid arguments for tool|STEAD_[A-Z_]+: /);
        expect(r.text, `${t.name} ${label}`).not.toMatch(/\n\s+at /);
        swept++;
      }
      if ("runId" in (t.inputSchema.properties ?? {}) && t.name !== "list_holds") {
        expect((await refused(c, t.name, { ...valid[t.name], runId: "no-such-run" })).code, t.name).toBe("STEAD_RUN_NOT_FOUND");
      }
    }
    expect(swept).toBeGreaterThan(100);
    expect(await refused(c, "session_transcript", { session: "no-such-session" })).toMatchObject({ code: "STEAD_SESSION_NOT_FOUND" });
    const wrongState = await refused(c, "retry", { runId: id });
    expect(wrongState.code).toBe("STEAD_INVALID_STATE");
    expect(wrongState.error).toMatchObject({ status: 409, runId: id, message: expect.any(String) as string, fix: expect.any(String) as string });
    expect(wrongState.text).toMatch(/^STEAD_INVALID_STATE: .+ \(fix: .+\)$/);
    expect((await refused(c, "approve", { runId: id, wait: "ship", idempotencyKey: "bad\u0001key" })).code).toBe("STEAD_BAD_OPTION");
    expect((await refused(c, "restore_snapshot", { runId: id, paths: ["../etc"] })).code).toBe("STEAD_BAD_OPTION");
    // An unknown tool is the SDK's own error.
    expect((await call(c, "drop_everything", {})).text).toMatch(/Tool drop_everything not found/);
    expect(await digestStore(s.stead.store)).toEqual(before);
  });

  it("without a token on loopback only the read tools may be called; a viewer may not approve; a bad token is refused before MCP", async () => {
    const id = await parked("tube");
    const viewer = await connect(tokens.viewer);
    await markUse(viewer);
    const operator = await connect(tokens.operator);
    await markUse(operator);
    const anonymous = await connect();
    const before = await digestStore(s.stead.store);

    expect((await ok<{ run: { id: string } }>(anonymous, "get_run", { runId: id })).run.id).toBe(id);
    expect((await ok<{ runs: unknown[] }>(viewer, "list_runs", {})).runs.length).toBeGreaterThan(0);
    for (const name of ["approve", "deny", "signal", "pause", "cancel", "fork", "resume", "retry", "release", "start", "send"]) {
      const args: Record<string, unknown> =
        name === "send"
          ? { session: "support-1", text: "hi" }
          : name === "start"
            ? { definition: "mcp-ship", input: { item: "tube" } }
            : { runId: id, ...(["approve", "deny", "signal"].includes(name) ? { wait: "ship" } : {}), ...(name === "signal" ? { payload: 1 } : {}), ...(name === "release" ? { choice: "retry" } : {}) };
      expect((await refused(anonymous, name, args)).code, name).toBe("STEAD_TOKEN_REFUSED");
      const v = await refused(viewer, name, args);
      expect(v.code, name).toBe("STEAD_NOT_PERMITTED");
      expect(v.text).toContain("victor (viewer)");
    }
    expect(await digestStore(s.stead.store)).toEqual(before);
    expect((await s.stead.runs.get(id)).status).toBe("waiting");

    const bad = new Client({ name: "stead-test", version: "1.0.0" });
    await expect(bad.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer stead_${"A".repeat(43)}` } } }))).rejects.toThrow();
    // And the operator may: the same approval is then recorded as the operator's name.
    expect(await ok(operator, "approve", { runId: id, wait: "ship" })).toMatchObject({ by: "olivia" });
  });

  it("answers /mcp with the API's Host and Origin checks, and 405 to a GET (no stream is offered)", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const crossSite = await fetch(`${server.url}/mcp`, { method: "POST", headers: { ...headers, origin: "https://evil.example" }, body });
    expect(crossSite.status).toBe(403);
    expect(((await crossSite.json()) as { code: string }).code).toBe("STEAD_ORIGIN_REFUSED");
    expect((await fetch(`${server.url}/mcp`, { method: "GET", headers: { accept: "text/event-stream" } })).status).toBe(405);
    const plain = await fetch(`${server.url}/mcp`, { method: "POST", headers, body });
    expect(plain.status).toBe(200);
    expect(((await plain.json()) as { result: { tools: unknown[] } }).result.tools.length).toBe(22);
  });
});
