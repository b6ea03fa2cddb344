/**
 * `stead serve` as a real process: it serves the store's runs over HTTP (and MCP at /mcp) on loopback, refuses a
 * non-loopback address while no tokens exist and a malformed --listen (nothing served, non-zero
 * exit), and SIGTERM stops it gracefully.
 */
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cli, FIXTURES, requireBuild, spawnCli, tempDir, until } from "./cli-helpers.js";

beforeAll(requireBuild);

describe("stead serve", () => {
  it("serves the store's runs on loopback; SIGTERM stops it after in-flight requests", async () => {
    const dir = tempDir();
    const started = await cli(["run", join(FIXTURES, "approval.ts"), "--input", '{"item":"tea"}'], dir);
    expect(started.code).not.toBe(0);
    const server = spawnCli(["serve", "--listen", "127.0.0.1:0"], dir);
    const url = await until("the server's URL", () => /on (http:\/\/[^\s]+)\/api\/v1/.exec(server.stdout())?.[1]);
    const res = await fetch(`${url}/api/v1/runs?status=waiting`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { runs: { definition: string; input: unknown }[] };
    expect(body.runs).toEqual([expect.objectContaining({ definition: "cli-approval", input: { item: "tea" } })]);
    const refused = await fetch(`${url}/api/v1/runs/x/pause`, { method: "POST" });
    expect(refused.status).toBe(401);
    // MCP at /mcp, its SDK loaded at this first request.
    const mcp = await fetch(`${url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_runs", arguments: { status: ["waiting"] } } }),
    });
    expect(mcp.status).toBe(200);
    const answer = (await mcp.json()) as { result: { structuredContent: { runs: { definition: string }[] } } };
    expect(answer.result.structuredContent.runs).toEqual([expect.objectContaining({ definition: "cli-approval" })]);
    server.child.kill("SIGTERM");
    const end = await server.done;
    expect(end.code).toBe(0);
    expect(end.stdout).toContain("server stopped");
  });

  it("refuses to serve a non-loopback address while no tokens exist, and a malformed --listen", async () => {
    const dir = tempDir();
    const open = await cli(["serve", "--listen", "0.0.0.0:0"], dir);
    expect(open.code).toBe(2);
    expect(open.stderr).toMatch(/no tokens are defined.*stead tokens create/);
    const bad = await cli(["serve", "--listen", "localhost:99999"], dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/is not host:port/);
  });
});
