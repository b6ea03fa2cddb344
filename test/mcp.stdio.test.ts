/**
 * `stead mcp` as a real process on a real SQLite store, through the SDK's own client over stdio:
 * the tools and their schemas, reads, an approval recorded as `--by` (asserted from the store's
 * rows and the run's side effect), a restore written where the caller says, `--read-only`, and a
 * standard output that carries the protocol and nothing else.
 */
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workflow } from "../src/index.js";
import { digestStore } from "../src/store/transfer/index.js";
import { BIN, cli, requireBuild, tempDir } from "./cli-helpers.js";
import { onStore, type OnStore } from "./helpers/both-stores.js";
import { call, ok, refused } from "./helpers/mcp.js";
import { listTree } from "./helpers/workspace.js";

beforeAll(requireBuild);

describe("stead mcp (stdio)", () => {
  let s: OnStore;
  let dir: string;
  let log: string;
  const opened: { client: Client; stderr: () => string; errors: Error[] }[] = [];

  const shipped = workflow("mcp-stdio-ship", { version: "1" }, async (ctx, input: { item: string }) => {
    const d = await ctx.approval("ship", { item: input.item });
    return ctx.step("ship-it", () => {
      appendFileSync(log, `${input.item} ${d.approved ? "shipped" : "kept"} by ${d.by}\n`);
      return d.approved;
    });
  });
  const editor = workflow("mcp-stdio-editor", async (ctx, root: string) => {
    await ctx.step("write", { effect: true }, () => {
      mkdirSync(join(root, "src"), { recursive: true });
      writeFileSync(join(root, "src", "main.ts"), "export const x = 1;\n");
    });
    return "edited";
  });

  beforeAll(async () => {
    s = await onStore("sqlite", "mcp-stdio");
    dir = tempDir("stead-mcp-stdio-");
    log = join(dir, "effects.log");
  });
  afterAll(async () => {
    await Promise.all(opened.map((o) => o.client.close()));
    await s.cleanup();
  });

  async function connect(...extra: string[]) {
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, "mcp", "--store", s.location, ...extra], cwd: dir, stderr: "pipe" });
    let err = "";
    transport.stderr?.on("data", (d: Buffer) => (err += d.toString()));
    const client = new Client({ name: "stead-test", version: "1.0.0" });
    const errors: Error[] = [];
    client.onerror = (e) => errors.push(e);
    await client.connect(transport);
    const o = { client, stderr: () => err, errors };
    opened.push(o);
    return o;
  }

  it("lists every tool with input and output schemas; restore may write a directory here", async () => {
    const { client, errors } = await connect("--by", "alice");
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(22);
    for (const t of tools) expect({ name: t.name, input: t.inputSchema.type, output: t.outputSchema?.type }).toEqual({ name: t.name, input: "object", output: "object" });
    const restore = tools.find((t) => t.name === "restore_snapshot");
    expect(Object.keys(restore?.inputSchema.properties ?? {})).toContain("to");
    expect(restore?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    expect(errors).toEqual([]);
  });

  it("reads the store's runs and approves one, recorded as --by; the run then completes with its side effect", async () => {
    const run = await s.stead.run(shipped, { item: "parcel" }, { followTimersMs: 0 });
    expect(run.status).toBe("waiting");
    const { client, stderr, errors } = await connect("--by", "alice");
    expect((await ok<{ runs: { id: string }[] }>(client, "list_runs", { status: ["waiting"] })).runs.map((r) => r.id)).toContain(run.id);
    const why = await ok<{ waysOut: { tool: string | null; arguments: object }[] }>(client, "why", { runId: run.id });
    expect(why.waysOut).toContainEqual(expect.objectContaining({ tool: "approve", arguments: { runId: run.id, wait: "ship" } }));
    const resource = await client.readResource({ uri: `stead://runs/${run.id}` });
    expect(JSON.parse((resource.contents[0] as { text: string }).text)).toMatchObject({ run: { id: run.id, status: "waiting" } });

    expect(await ok(client, "approve", { runId: run.id, wait: "ship", idempotencyKey: "desk-1" })).toMatchObject({ approved: true, by: "alice", already: false });
    expect(await s.rows("SELECT resolved_by FROM waits WHERE run_id = ? AND name = 'ship'", run.id)).toEqual([{ resolved_by: "alice" }]);
    expect((await s.stead.runs.follow(run.id, [shipped], { followTimersMs: 0 })).status).toBe("completed");
    expect(readFileSync(log, "utf8")).toContain("parcel shipped by alice\n");

    const missing = await refused(client, "get_run", { runId: "no-such-run" });
    expect(missing.code).toBe("STEAD_RUN_NOT_FOUND");
    expect(missing.text).not.toMatch(/\n\s+at /);
    expect(errors).toEqual([]);
    expect(stderr()).toContain(`stead mcp: serving ${s.location} over stdio`);
  });

  it("restore_snapshot writes the snapshot into the directory named, or returns it; a relative path is refused", async () => {
    const workspace = join(dir, "repo");
    mkdirSync(workspace);
    const run = await s.stead.run(editor, workspace, { workspace, pollMs: 10 });
    expect(run.status).toBe("completed");
    const { client } = await connect();
    const target = join(dir, "restored");
    const written = await ok<{ target: string; files: { path: string; content: string | null }[] }>(client, "restore_snapshot", { runId: run.id, step: "write", to: target });
    expect(written.target).toBe(target);
    expect(written.files.map((f) => [f.path, f.content])).toEqual([["src/main.ts", null]]);
    expect(listTree(target)).toMatchObject({ src: expect.stringMatching(/^dir /) as string, "src/main.ts": expect.stringMatching(/ export const x = 1;\n$/) as string });

    const returned = await ok<{ target: null; files: { path: string; content: string }[] }>(client, "restore_snapshot", { runId: run.id });
    expect(returned).toMatchObject({ target: null, files: [{ path: "src/main.ts", encoding: "utf8", content: "export const x = 1;\n" }] });
    expect((await call(client, "restore_snapshot", { runId: run.id, to: "relative/dir" })).text).toMatch(/Input validation error.*must be an absolute path/s);
    expect((await refused(client, "restore_snapshot", { runId: run.id, to: target })).code).toBe("STEAD_BAD_PATH");

    // A viewer reads the snapshot but writes nothing on this machine.
    const reader = (await connect("--read-only")).client;
    expect((await ok<{ target: null }>(reader, "restore_snapshot", { runId: run.id })).target).toBeNull();
    const elsewhere = join(dir, "not-written");
    const writing = await refused(reader, "restore_snapshot", { runId: run.id, to: elsewhere });
    expect([writing.code, existsSync(elsewhere)]).toEqual(["STEAD_NOT_PERMITTED", false]);
  });

  it("--read-only reads, and refuses every control tool with nothing changed", async () => {
    const run = await s.stead.run(shipped, { item: "box" }, { followTimersMs: 0 });
    const { client } = await connect("--read-only");
    const before = await digestStore(s.stead.store);
    expect((await ok<{ run: { id: string } }>(client, "get_run", { runId: run.id })).run.id).toBe(run.id);
    const r = await refused(client, "approve", { runId: run.id, wait: "ship" });
    expect(r.code).toBe("STEAD_NOT_PERMITTED");
    expect(r.text).toContain("stead mcp --read-only (viewer) may not waits.approve");
    expect(await digestStore(s.stead.store)).toEqual(before);
  });

  it("writes only protocol messages on standard output, and ends when its input closes", async () => {
    const child = spawn(process.execPath, [BIN, "mcp", "--store", s.location], { cwd: dir, stdio: "pipe" });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
    const send = (m: object) => child.stdin.write(`${JSON.stringify(m)}\n`);
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "list_runs", arguments: { limit: 1 } } });
    send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "get_run", arguments: { runId: "no-such-run" } } });
    const deadline = Date.now() + 30_000;
    while (out.split("\n").filter(Boolean).length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    child.stdin.end();
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(0);
    const messages = out.split("\n").filter(Boolean).map((l) => JSON.parse(l) as { jsonrpc: string; id: number; result?: { isError?: boolean } });
    // Calls are answered as they finish, not in the order they came.
    messages.sort((a, b) => a.id - b.id);
    expect(messages.map((m) => [m.jsonrpc, m.id])).toEqual([
      ["2.0", 1],
      ["2.0", 2],
      ["2.0", 3],
    ]);
    expect(messages[2]?.result?.isError).toBe(true);
    expect(err).toContain("stead mcp: serving");
  });

  it("a missing store is refused on standard error, with nothing on standard output", async () => {
    const r = await cli(["mcp", "--store", join(dir, "none", "stead.db")], dir);
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^stead: no Stead store at .*none\/stead\.db/);
  });
});
