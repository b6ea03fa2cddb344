/**
 * The MCP `definitions` and `start` tools at /mcp of a real server on 127.0.0.1, on both stores,
 * through the SDK's client, with a real worker announcing what it serves: the listing against the
 * store's announcement rows; a start by name with an idempotency key, executed by the worker
 * (asserted from its side-effect log and the runs table); refusals that change nothing; a start no
 * live worker serves, which waits.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { workflow, type Worker } from "../src/index.js";
import { digestStore } from "../src/store/transfer/index.js";
import { STORE_KINDS } from "./helpers/both-stores.js";
import { ok, refused } from "./helpers/mcp.js";
import { servedStore, type Served } from "./helpers/served-store.js";
import { waitUntil } from "./helpers/waiting.js";

describe.each(STORE_KINDS)("the MCP definitions and start tools on %s", (kind) => {
  let served: Served;
  let worker: Worker;
  const clients: Client[] = [];
  const packer = workflow("mcp-packer", { input: z.object({ box: z.string().min(1), count: z.number().int().min(1).optional() }) }, async (ctx, input) =>
    ctx.step("pack", () => {
      appendFileSync(served.log, `packed ${input.box} x${input.count ?? 1}\n`);
      return input.box;
    }),
  );

  beforeAll(async () => {
    served = await servedStore(kind, "mcp-definitions");
    worker = served.s.stead.worker({ definitions: [packer], pollMs: 20, graceMs: 500, leaseMs: 3_000 });
    worker.on("error", () => undefined);
    worker.start();
    await waitUntil("the worker's announcement", async () => Number((await served.s.rows("SELECT COUNT(*) AS n FROM announcements"))[0]?.n) === 1);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    worker.abortAll();
    await served.close();
  });

  async function connect(token: string): Promise<Client> {
    const client = new Client({ name: "stead-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${served.server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    clients.push(client);
    return client;
  }
  const logged = () => (existsSync(served.log) ? readFileSync(served.log, "utf8") : "");
  const runsOf = (definition: string) => served.s.rows("SELECT id, status, input FROM runs WHERE definition = ? ORDER BY created_at, id", definition);

  it("definitions lists what the worker announced, as the store's rows say", async () => {
    const [row] = await served.s.rows("SELECT worker_id, fingerprint, host, pid, announced_at FROM announcements");
    const c = await connect(served.tokens.viewer);
    const listed = await ok<{ definitions: Record<string, unknown>[] }>(c, "definitions", {});
    expect(listed.definitions).toMatchObject([
      {
        name: "mcp-packer",
        kind: "workflow",
        served: true,
        fingerprints: [row?.fingerprint],
        since: Number(row?.announced_at),
        workers: [{ workerId: row?.worker_id, host: row?.host, pid: Number(row?.pid) }],
        inputSchema: { type: "object", required: ["box"] },
      },
    ]);
    expect(await ok(c, "definitions", { name: "mcp-none" })).toEqual({ definitions: [] });
  });

  it("start runs a definition by name, recorded as the token's name; the same idempotencyKey again starts nothing", async () => {
    const c = await connect(served.tokens.operator);
    const args = { definition: "mcp-packer", input: { box: "books", count: 2 }, idempotencyKey: "desk-9" };
    const first = await ok<{ id: string }>(c, "start", args);
    expect(first).toMatchObject({ definition: "mcp-packer", served: true, workers: 1, already: false });
    expect(await ok(c, "start", args)).toMatchObject({ id: first.id, already: true });
    await waitUntil("the run's effect", () => logged().includes("packed books x2\n"));
    expect((await runsOf("mcp-packer")).map((r) => r.id)).toEqual([first.id]);
    expect(await served.s.rows("SELECT verb, actor FROM idempotency_keys WHERE key = 'desk-9'")).toEqual([{ verb: "start", actor: "olivia" }]);
    await waitUntil("the run completed", async () => (await runsOf("mcp-packer"))[0]?.status === "completed");
  });

  it("refuses input the announced schema rejects, an unknown name and a viewer, and changes nothing", async () => {
    const op = await connect(served.tokens.operator);
    const viewer = await connect(served.tokens.viewer);
    // A token's last use is marked at most once a minute: mark both now, so the digest shows any other write.
    await ok(op, "definitions", {});
    await ok(viewer, "definitions", {});
    const before = await digestStore(served.s.stead.store);
    const mismatch = await refused(op, "start", { definition: "mcp-packer", input: { box: 3 } });
    expect(mismatch).toMatchObject({ code: "STEAD_SCHEMA_MISMATCH", error: { status: 422, field: "input.box", definition: "mcp-packer" } });
    expect(mismatch.text).toContain("/box");
    expect(await refused(op, "start", { definition: "mcp-none", input: {} })).toMatchObject({ code: "STEAD_DEFINITION_NOT_FOUND", error: { status: 404 } });
    expect((await refused(viewer, "start", { definition: "mcp-packer", input: { box: "x" } })).code).toBe("STEAD_NOT_PERMITTED");
    expect(await digestStore(served.s.stead.store)).toEqual(before);
    expect(logged()).not.toContain("packed x");
  });

  it("with the worker stopped, a start is allowed and waits, and says no live worker serves it", async () => {
    await worker.stop();
    const c = await connect(served.tokens.operator);
    expect((await ok<{ definitions: Record<string, unknown>[] }>(c, "definitions", {})).definitions).toMatchObject([{ name: "mcp-packer", served: false, workers: [] }]);
    const r = await ok<{ id: string; note: string }>(c, "start", { definition: "mcp-packer", input: { box: "lamps" } });
    expect(r).toMatchObject({ served: false, workers: 0, already: false });
    expect(r.note).toMatch(/no live worker serves "mcp-packer"/);
    expect((await runsOf("mcp-packer")).find((x) => x.id === r.id)).toMatchObject({ status: "pending" });
  });
});
