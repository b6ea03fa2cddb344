/**
 * The HTTP API over real HTTP on 127.0.0.1, on both stores: reads, control commands with their
 * idempotency keys, and refusals. What a command did is asserted from the world: a side-effect
 * log the workflow writes, and the store's own rows (by digest: a refused request leaves them
 * as they were).
 */
import { appendFileSync, readFileSync } from "node:fs";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workflow, type Stead } from "../src/index.js";
import type { Listening } from "../src/server/listen.js";
import { digestStore } from "../src/store/transfer/index.js";
import { STORE_KINDS, type OnStore } from "./helpers/both-stores.js";
import { servedStore, type Served } from "./helpers/served-store.js";


describe.each(STORE_KINDS)("the HTTP API on %s", (kind) => {
  let s: OnStore;
  let server: Listening;
  let log: string;
  let served: Served;
  /** Real tokens of the store: an operator's and a viewer's secrets. */
  const tokens = { operator: "", viewer: "" };
  const shipped = workflow("api-ship", { version: "1" }, async (ctx, input: { item: string }) => {
    await ctx.step("prepare", () => `prepared ${input.item}`);
    const d = await ctx.approval("ship", { item: input.item });
    return ctx.step("ship-it", () => {
      appendFileSync(log, `${input.item} ${d.approved ? "shipped" : "kept"} by ${d.by}\n`);
      return d.approved;
    });
  });

  beforeAll(async () => {
    served = await servedStore(kind, "server-api");
    ({ s, server, log } = served);
    Object.assign(tokens, served.tokens);
  });
  afterAll(async () => {
    await served.close();
  });

  const call = async (method: string, path: string, init: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {}) => {
    const headers: Record<string, string> = { ...(init.headers ?? {}) };
    if (init.token) headers.authorization = `Bearer ${init.token}`;
    if (init.body !== undefined || init.raw !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(`${server.url}/api/v1${path}`, { method, headers, ...(init.raw !== undefined ? { body: init.raw } : init.body !== undefined ? { body: JSON.stringify(init.body) } : {}) });
    return { status: res.status, type: res.headers.get("content-type"), replayed: res.headers.get("idempotent-replayed"), body: (await res.json()) as Record<string, unknown> };
  };

  async function parked(item: string): Promise<string> {
    const run = await s.stead.run(shipped, { item }, { followTimersMs: 0 });
    expect(run.status).toBe("waiting");
    return run.id;
  }

  const finish = (stead: Stead, id: string) => stead.runs.follow(id, [shipped], { followTimersMs: 0 });

  it("an approval over HTTP resumes the run, recorded as the token's name; the same key again changes nothing", async () => {
    const id = await parked("parcel");
    const approve = () => call("POST", `/runs/${id}/waits/ship/approve`, { token: tokens.operator, body: { reason: "looks right" }, headers: { "idempotency-key": "ticket-42" } });
    const first = await approve();
    expect(first).toMatchObject({ status: 200, replayed: "false", body: { runId: id, wait: "ship", approved: true, by: "olivia", already: false } });
    expect(await approve()).toMatchObject({ status: 200, replayed: "true", body: { approved: true, by: "olivia", already: true } });
    expect((await finish(s.stead, id)).status).toBe("completed");
    expect(readFileSync(log, "utf8")).toContain("parcel shipped by olivia\n");
    const decided = await s.rows("SELECT resolved_by FROM waits WHERE run_id = ? AND name = 'ship'", id);
    expect(decided).toEqual([{ resolved_by: "olivia" }]);
  });

  it("reads: a run in full with its journal, waits and why; the list; events after a sequence number", async () => {
    const id = await parked("box");
    const full = await call("GET", `/runs/${id}`);
    expect(full.status).toBe(200);
    expect(full.body).toMatchObject({ run: { id, status: "waiting", definition: "api-ship" }, waits: [{ name: "ship", status: "open" }] });
    expect((full.body.journal as { id: string }[]).map((j) => j.id)).toEqual(["prepare", "ship"]);
    expect((full.body.why as { text: string }).text).toContain("ship");
    const list = await call("GET", `/runs?status=waiting&definition=api-ship`);
    expect((list.body.runs as { id: string }[]).map((r) => r.id)).toContain(id);
    const events = await call("GET", `/runs/${id}/events?after=0&limit=2`);
    expect((events.body.events as unknown[]).length).toBe(2);
  });

  it("refusals are problems with Stead's code, the field or id they name, and change nothing in the store", async () => {
    const id = await parked("crate");
    // A token's last use is marked at most once a minute: mark both now, so the digest below
    // shows any other write a refusal made. (That mark is the one trace a refused request with a
    // valid token leaves.)
    for (const token of [tokens.operator, tokens.viewer]) expect((await call("GET", "/runs", { token })).status).toBe(200);
    const before = await digestStore(s.stead.store);
    const cases: [string, string, Parameters<typeof call>[2], number, string, Record<string, unknown>?][] = [
      ["POST", `/runs/${id}/waits/ship/approve`, {}, 401, "STEAD_TOKEN_REFUSED"],
      ["POST", `/runs/${id}/waits/ship/approve`, { token: "stead_" + "A".repeat(43) }, 401, "STEAD_TOKEN_REFUSED"],
      ["POST", `/runs/${id}/waits/ship/approve`, { token: tokens.viewer }, 403, "STEAD_NOT_PERMITTED"],
      ["POST", `/runs/${id}/waits/ship/approve`, { token: tokens.operator, raw: "{not json" }, 400, "STEAD_BAD_JSON", { field: "body" }],
      ["POST", `/runs/${id}/waits/ship/approve`, { token: tokens.operator, body: { reason: 42 } }, 400, "STEAD_BAD_OPTION", { field: "body.reason" }],
      ["POST", `/runs/${id}/waits/ship/approve`, { token: tokens.operator, body: { surprise: true } }, 400, "STEAD_BAD_OPTION"],
      ["POST", `/runs/${id}/waits/ship/approve`, { token: tokens.operator, headers: { "idempotency-key": "" } }, 400, "STEAD_BAD_OPTION"],
      ["POST", `/runs/nope/waits/ship/approve`, { token: tokens.operator }, 404, "STEAD_RUN_NOT_FOUND"],
      ["POST", `/runs/${id}/waits/nope/approve`, { token: tokens.operator }, 404, "STEAD_WAIT_NOT_FOUND"],
      ["POST", `/runs/${id}/retry`, { token: tokens.operator }, 409, "STEAD_INVALID_STATE"],
      ["POST", `/runs/${id}/release`, { token: tokens.operator, body: { choice: "maybe" } }, 400, "STEAD_BAD_OPTION", { field: "body.choice" }],
      ["POST", `/runs/${id}/pause`, { token: tokens.operator, raw: "x".repeat(65 * 1024) }, 413, "STEAD_PAYLOAD_TOO_LARGE"],
      ["GET", `/runs?status=sleeping`, {}, 400, "STEAD_BAD_OPTION", { field: "query.status.0" }],
      ["GET", `/runs?limit=0`, {}, 400, "STEAD_BAD_OPTION", { field: "query.limit" }],
      ["GET", `/runs/${"x".repeat(300)}`, {}, 400, "STEAD_BAD_OPTION", { field: "path.runId" }],
      ["GET", `/nothing-here`, {}, 404, "STEAD_NO_ROUTE"],
      ["DELETE", `/runs/${id}`, { token: tokens.operator }, 405, "STEAD_METHOD_NOT_ALLOWED"],
    ];
    for (const [method, path, init, status, code, more] of cases) {
      const r = await call(method, path, init);
      expect({ method, path, status: r.status, type: r.type, code: r.body.code }).toEqual({ method, path, status, type: "application/problem+json", code });
      expect(r.body).toMatchObject({ status, type: `urn:stead:error:${code}`, ...(more ?? {}) });
      expect(JSON.stringify(r.body)).not.toContain(tokens.operator);
      expect(JSON.stringify(r.body)).not.toContain(tokens.viewer);
    }
    expect(await digestStore(s.stead.store)).toEqual(before);
  });

  it("refuses a Host it does not serve and a cross-site Origin, before reading anything", async () => {
    const id = await parked("tube");
    const before = await digestStore(s.stead.store);
    // fetch will not send another Host: a DNS-rebinding page's requests carry its own name.
    const rebinding = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${server.url}/api/v1/runs/${id}`, { headers: { host: "evil.example:80" } }, (res) => {
        let body = "";
        res.on("data", (b: Buffer) => (body += b.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      req.end();
    });
    expect(rebinding.status).toBe(403);
    expect((JSON.parse(rebinding.body) as { code: string }).code).toBe("STEAD_ORIGIN_REFUSED");
    expect(rebinding.body).not.toContain("tube");
    const crossSite = await fetch(`${server.url}/api/v1/runs/${id}/pause`, { method: "POST", headers: { origin: "https://evil.example", authorization: `Bearer ${tokens.operator}` } });
    expect(crossSite.status).toBe(403);
    expect(await digestStore(s.stead.store)).toEqual(before);
    expect((await s.stead.runs.get(id)).pauseRequested).toBe(false);
  });

  it("serves its OpenAPI document, with every route and the problem schema", async () => {
    const doc = (await (await fetch(`${server.url}/api/v1/openapi.json`)).json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/api/v1/runs", "/api/v1/runs/{runId}", "/api/v1/runs/{runId}/waits/{wait}/approve", "/api/v1/runs/{runId}/release"]));
    expect(doc.paths["/api/v1/runs/{runId}/release"]?.post).toMatchObject({ requestBody: { content: { "application/json": { schema: { properties: { choice: { enum: ["retry", "skip", "result", "accept-change"] } } } } } } });
  });

  it("healthz answers while the process is up; readyz once the store is reachable", async () => {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const ready = (await (await fetch(`${server.url}/readyz`)).json()) as { ok: boolean; schemaVersion: number };
    expect(ready).toMatchObject({ ok: true, dialect: kind });
    // The store is read again at each call: one whose latest migration is gone (a store put back
    // from an older backup under a running server) is not ready until migrated.
    const [latest] = await s.rows("SELECT version, name, applied_at FROM stead_migrations WHERE version = ?", ready.schemaVersion);
    expect(latest).toBeDefined();
    await s.write("DELETE FROM stead_migrations WHERE version = ?", ready.schemaVersion);
    const stale = await fetch(`${server.url}/readyz`);
    expect([stale.status, ((await stale.json()) as { code: string }).code]).toEqual([503, "STEAD_STORE_TOO_OLD"]);
    await s.write("INSERT INTO stead_migrations (version, name, applied_at) VALUES (?, ?, ?)", latest?.version, latest?.name, latest?.applied_at);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });
});
