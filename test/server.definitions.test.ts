/**
 * Definitions, workers and starts by name over real HTTP on 127.0.0.1, on both stores, with a
 * real worker announcing what it serves: GET /definitions and GET /workers against the store's
 * announcement rows; POST /runs by name with an Idempotency-Key, its run executed by the worker
 * (asserted from the side-effect log and the runs table); refusals that change nothing in the
 * store; and a start no live worker serves, which is allowed and waits.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { workflow, type Worker } from "../src/index.js";
import { digestStore } from "../src/store/transfer/index.js";
import { STORE_KINDS } from "./helpers/both-stores.js";
import { servedStore, type Served } from "./helpers/served-store.js";
import { waitUntil } from "./helpers/waiting.js";

describe.each(STORE_KINDS)("definitions, workers and starts by name over HTTP on %s", (kind) => {
  let served: Served;
  let worker: Worker;
  const fixer = workflow("http-fixer", { input: z.object({ issue: z.string().min(1), priority: z.number().int().min(1).max(5).optional() }) }, async (ctx, input) =>
    ctx.step("fix", () => {
      appendFileSync(served.log, `fixed ${input.issue} at ${input.priority ?? 3}\n`);
      return input.issue;
    }),
  );
  const plain = workflow("http-plain", (_ctx, input: unknown) => ({ echo: input }));
  let letGo: () => void = () => undefined;
  const holding = workflow("http-holding", async (ctx) =>
    ctx.step("hold", () => new Promise<string>((resolve) => (letGo = () => resolve("let go")))),
  );

  beforeAll(async () => {
    served = await servedStore(kind, "server-definitions");
    worker = served.s.stead.worker({ definitions: [fixer, plain, holding], pollMs: 20, graceMs: 500, leaseMs: 3_000 });
    worker.on("error", () => undefined);
    worker.start();
    await waitUntil("the worker's announcements", async () => Number((await served.s.rows("SELECT COUNT(*) AS n FROM announcements"))[0]?.n) === 3);
  });
  afterAll(async () => {
    worker.abortAll();
    await served.close();
  });

  const call = async (method: string, path: string, init: { token?: string; body?: unknown; raw?: string; key?: string } = {}) => {
    const headers: Record<string, string> = {};
    if (init.token) headers.authorization = `Bearer ${init.token}`;
    if (init.key !== undefined) headers["idempotency-key"] = init.key;
    if (init.body !== undefined || init.raw !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(`${served.server.url}/api/v1${path}`, { method, headers, ...(init.raw !== undefined ? { body: init.raw } : init.body !== undefined ? { body: JSON.stringify(init.body) } : {}) });
    return { status: res.status, type: res.headers.get("content-type"), replayed: res.headers.get("idempotent-replayed"), body: (await res.json()) as Record<string, unknown> };
  };
  const announcements = () => served.s.rows("SELECT worker_id, name, fingerprint, host, pid, announced_at FROM announcements ORDER BY name");
  const runsOf = (definition: string) => served.s.rows("SELECT id, status, input FROM runs WHERE definition = ? ORDER BY created_at, id", definition);
  const logged = () => (existsSync(served.log) ? readFileSync(served.log, "utf8") : "");

  it("GET /definitions: each announced definition, its kind, fingerprints, input JSON Schema and the live workers serving it, as the store records them", async () => {
    const rows = await announcements();
    const fixerRow = rows.find((r) => r.name === "http-fixer");
    expect(fixerRow).toBeDefined();
    const r = await call("GET", "/definitions");
    expect(r.status).toBe(200);
    const defs = r.body.definitions as Record<string, unknown>[];
    expect(defs.map((d) => d.name).sort()).toEqual(["http-fixer", "http-holding", "http-plain"]);
    const fixerView = defs.find((d) => d.name === "http-fixer");
    expect(fixerView).toMatchObject({
      kind: "workflow",
      served: true,
      fingerprints: [fixerRow?.fingerprint],
      since: Number(fixerRow?.announced_at),
      workers: [{ workerId: fixerRow?.worker_id, host: fixerRow?.host, pid: Number(fixerRow?.pid), fingerprint: fixerRow?.fingerprint, since: Number(fixerRow?.announced_at) }],
      inputSchema: { type: "object", properties: { issue: { type: "string", minLength: 1 } }, required: ["issue"] },
    });
    const one = await call("GET", "/definitions?name=http-plain");
    expect((one.body.definitions as Record<string, unknown>[]).map((d) => [d.name, d.inputSchema, d.served])).toEqual([["http-plain", null, true]]);
    expect((await call("GET", "/definitions?name=http-none")).body).toEqual({ definitions: [] });
  });

  it("GET /workers: the live workers, each with its host, pid and the definitions it serves", async () => {
    const rows = await announcements();
    const r = await call("GET", "/workers");
    expect(r.status).toBe(200);
    const [only, ...rest] = r.body.workers as Record<string, unknown>[];
    expect(rest).toEqual([]);
    expect(only).toMatchObject({
      workerId: rows[0]?.worker_id,
      host: rows[0]?.host,
      pid: process.pid,
      definitions: rows.map((x) => ({ name: x.name, fingerprint: x.fingerprint })),
      since: Math.min(...rows.map((x) => Number(x.announced_at))),
    });
    expect(typeof only?.lastSeenAt).toBe("number");
    expect(only?.leases).toEqual([]);
  });

  it("GET /workers: each worker's leases, as the runs table holds them, while it runs them", async () => {
    const { id } = await served.s.stead.runs.start(holding, {});
    await waitUntil("the run to be claimed", async () => (await served.s.rows("SELECT status FROM runs WHERE id = ?", id))[0]?.status === "running");
    const [row] = await served.s.rows("SELECT lease_owner, lease_expires_at FROM runs WHERE id = ?", id);
    const workers = (await call("GET", "/workers")).body.workers as { workerId: string; leases: { runId: string; expiresAt: number }[] }[];
    expect(workers.map((w) => w.workerId)).toEqual([row?.lease_owner]);
    // A heartbeat may have renewed it between the two reads.
    expect(workers[0]?.leases.map((l) => l.runId)).toEqual([id]);
    expect(workers[0]?.leases[0]?.expiresAt).toBeGreaterThanOrEqual(Number(row?.lease_expires_at));
    letGo();
    await waitUntil("the run to complete", async () => (await served.s.rows("SELECT status FROM runs WHERE id = ?", id))[0]?.status === "completed");
    expect(((await call("GET", "/workers")).body.workers as { leases: unknown[] }[])[0]?.leases).toEqual([]);
  });

  it("POST /runs starts a run by name that the worker executes; the same Idempotency-Key again returns it and starts nothing", async () => {
    const start = () => call("POST", "/runs", { token: served.tokens.operator, key: "ticket-7", body: { definition: "http-fixer", input: { issue: "door", priority: 2 } } });
    const first = await start();
    expect(first).toMatchObject({ status: 200, replayed: "false", body: { definition: "http-fixer", already: false, served: true, workers: 1 } });
    expect(first.body).not.toHaveProperty("note");
    const id = first.body.id as string;
    expect(await start()).toMatchObject({ status: 200, replayed: "true", body: { id, already: true, served: true } });
    await waitUntil("the run's effect", () => logged().includes("fixed door at 2\n"));
    const rows = await runsOf("http-fixer");
    expect(rows.map((x) => [x.id, JSON.parse(String(x.input)) as unknown])).toEqual([[id, { issue: "door", priority: 2 }]]);
    await waitUntil("the run completed", async () => (await runsOf("http-fixer"))[0]?.status === "completed");
    expect(logged().match(/fixed door/g)).toHaveLength(1);
    expect(await served.s.rows("SELECT verb, key, actor FROM idempotency_keys WHERE key = 'ticket-7'")).toEqual([{ verb: "start", key: "ticket-7", actor: "olivia" }]);

    const named = await call("POST", "/runs", { token: served.tokens.operator, body: { definition: "http-plain", id: "http-run-1" } });
    expect(named.body).toMatchObject({ id: "http-run-1", served: true });
    expect(await waitUntil("the named run", async () => (await runsOf("http-plain")).find((x) => x.id === "http-run-1" && x.status === "completed"))).toBeDefined();
  });

  it("refuses a bad start, naming the field, an unknown definition or a reused key, and changes nothing in the store", async () => {
    // A token's last use is marked at most once a minute: mark both now, so the digest shows any other write.
    for (const token of [served.tokens.operator, served.tokens.viewer]) expect((await call("GET", "/definitions", { token })).status).toBe(200);
    await call("POST", "/runs", { token: served.tokens.operator, key: "ticket-8", body: { definition: "http-fixer", input: { issue: "window" } } });
    await waitUntil("every run ended", async () => (await served.s.rows("SELECT id FROM runs WHERE status NOT IN ('completed', 'failed', 'cancelled')")).length === 0);
    const before = await digestStore(served.s.stead.store);
    const op = served.tokens.operator;
    const cases: [Parameters<typeof call>[2], number, string, Record<string, unknown>?][] = [
      [{ body: { definition: "http-fixer", input: { issue: "x" } } }, 401, "STEAD_TOKEN_REFUSED"],
      [{ token: served.tokens.viewer, body: { definition: "http-fixer", input: { issue: "x" } } }, 403, "STEAD_NOT_PERMITTED"],
      [{ token: op, body: {} }, 400, "STEAD_BAD_OPTION", { field: "body.definition" }],
      [{ token: op, body: { definition: "not a name!" } }, 400, "STEAD_BAD_OPTION", { field: "body.definition" }],
      [{ token: op, body: { definition: 42 } }, 400, "STEAD_BAD_OPTION", { field: "body.definition" }],
      [{ token: op, body: { definition: "http-fixer", input: { issue: "x" }, id: "" } }, 400, "STEAD_BAD_OPTION", { field: "body.id" }],
      [{ token: op, body: { definition: "http-fixer", input: { issue: "x" }, id: "x".repeat(201) } }, 400, "STEAD_BAD_OPTION", { field: "body.id" }],
      [{ token: op, body: { definition: "http-fixer", input: { issue: "x" }, id: "-dash" } }, 400, "STEAD_BAD_ID"],
      [{ token: op, body: { definition: "http-fixer", input: { issue: "x" }, workspace: "/tmp" } }, 400, "STEAD_BAD_OPTION"],
      [{ token: op, raw: "{not json" }, 400, "STEAD_BAD_JSON", { field: "body" }],
      [{ token: op, key: "", body: { definition: "http-fixer", input: { issue: "x" } } }, 400, "STEAD_BAD_OPTION"],
      [{ token: op, body: { definition: "http-fixer", input: { issue: 5 } } }, 422, "STEAD_SCHEMA_MISMATCH", { field: "body.input.issue", definition: "http-fixer" }],
      [{ token: op, body: { definition: "http-fixer", input: { issue: "x", priority: 9 } } }, 422, "STEAD_SCHEMA_MISMATCH", { field: "body.input.priority" }],
      [{ token: op, body: { definition: "http-fixer", input: { priority: 2 } } }, 422, "STEAD_SCHEMA_MISMATCH", { field: "body.input.issue" }],
      [{ token: op, body: { definition: "http-fixer" } }, 422, "STEAD_SCHEMA_MISMATCH", { field: "body.input" }],
      [{ token: op, body: { definition: "http-nothing", input: {} } }, 404, "STEAD_DEFINITION_NOT_FOUND", { definition: "http-nothing" }],
      [{ token: op, key: "ticket-8", body: { definition: "http-fixer", input: { issue: "another" } } }, 409, "STEAD_IDEMPOTENCY_CONFLICT"],
    ];
    for (const [init, status, code, more] of cases) {
      const r = await call("POST", "/runs", init);
      const label = JSON.stringify(init).slice(0, 160);
      expect({ label, status: r.status, type: r.type, code: r.body.code }).toEqual({ label, status, type: "application/problem+json", code });
      expect(r.body, label).toMatchObject({ status, type: `urn:stead:error:${code}`, ...(more ?? {}) });
      expect(String(r.body.fix).length, label).toBeGreaterThan(10);
    }
    const unknown = await call("POST", "/runs", { token: op, body: { definition: "http-nothing" } });
    expect(String(unknown.body.detail)).toContain("http-fixer");
    for (const q of ["/definitions?name=", "/definitions?surprise=1", "/workers?x=1"]) expect((await call("GET", q)).body, q).toMatchObject({ status: 400, code: "STEAD_BAD_OPTION" });
    expect(await digestStore(served.s.stead.store)).toEqual(before);
    expect(logged()).not.toMatch(/fixed (x|another)/);
  });

  it("once the worker stops, no live worker serves the definitions: a start by name is allowed, waits pending, and says so", async () => {
    await worker.stop();
    expect(await announcements()).toEqual([]);
    expect((await call("GET", "/workers")).body).toEqual({ workers: [] });
    const defs = (await call("GET", "/definitions?name=http-fixer")).body.definitions as Record<string, unknown>[];
    expect(defs).toMatchObject([{ name: "http-fixer", served: false, workers: [], since: null }]);
    const r = await call("POST", "/runs", { token: served.tokens.operator, body: { definition: "http-fixer", input: { issue: "roof" } } });
    expect(r).toMatchObject({ status: 200, body: { definition: "http-fixer", already: false, served: false, workers: 0 } });
    expect(String(r.body.note)).toMatch(/no live worker serves "http-fixer"/);
    expect((await runsOf("http-fixer")).find((x) => x.id === r.body.id)).toMatchObject({ status: "pending" });
    // The schema of the last announcement still checks the input.
    expect((await call("POST", "/runs", { token: served.tokens.operator, body: { definition: "http-fixer", input: { issue: 1 } } })).status).toBe(422);
  });
});
