/**
 * GET /api/v1/runs over real HTTP on 127.0.0.1, on both stores: every listing filter, both sort
 * keys and orders, and a walk over pages by nextCursor, each compared with what the database
 * itself returns for the same question; malformed filters, sorts, limits and cursors refused 400
 * naming the query field, with the store unchanged. The MCP list_runs tool walks the same pages.
 */
import Database from "better-sqlite3";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { digestStore } from "../src/store/transfer/index.js";
import { STORE_KINDS } from "./helpers/both-stores.js";
import { SEED_T0, seedId, seedPostgres, seedSqlite } from "./helpers/seed-runs.js";
import { ok, refused } from "./helpers/mcp.js";
import { servedStore, type Served } from "./helpers/served-store.js";
import { withClient } from "./setup/databases.js";

const RUNS = 60;

describe.each(STORE_KINDS)("the run listing over HTTP on %s", (kind) => {
  let served: Served;

  beforeAll(async () => {
    served = await servedStore(kind, "server-listing");
    if (kind === "sqlite") {
      const db = new Database(served.s.location);
      try {
        seedSqlite(db, RUNS);
      } finally {
        db.close();
      }
    } else {
      await withClient(served.s.location, (c) => seedPostgres(c, RUNS));
    }
  });
  afterAll(async () => {
    await served.close();
  });

  const get = async (query: string, token?: string) => {
    const res = await fetch(`${served.server.url}/api/v1/runs${query}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    return { status: res.status, type: res.headers.get("content-type"), body: (await res.json()) as Record<string, unknown> };
  };

  /** The ids the database orders so, for a WHERE clause and an ORDER BY of its own. */
  const expected = async (where: string, orderBy: string, ...params: unknown[]) =>
    (await served.s.rows(`SELECT id FROM runs ${where === "" ? "" : `WHERE ${where}`} ORDER BY ${orderBy}`, ...params)).map((r) => String(r.id));

  /** Every page of a listing, by nextCursor: the ids in order, and how many pages it took. */
  async function walk(query: Record<string, string>): Promise<{ ids: string[]; pages: number }> {
    const ids: string[] = [];
    let pages = 0;
    for (let cursor: string | null = null; ; ) {
      const q = new URLSearchParams({ ...query, ...(cursor === null ? {} : { cursor }) });
      const r = await get(`?${q.toString()}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      pages++;
      ids.push(...(r.body.runs as { id: string }[]).map((x) => x.id));
      cursor = r.body.nextCursor as string | null;
      if (cursor === null) return { ids, pages };
      expect(pages).toBeLessThan(RUNS + 2);
    }
  }

  it("a first page is the newest created runs, with the cursor of the next; the last page's cursor is null", async () => {
    const first = await get("?limit=5");
    expect(first.status).toBe(200);
    expect(Object.keys(first.body).sort()).toEqual(["nextCursor", "runs"]);
    expect((first.body.runs as { id: string }[]).map((r) => r.id)).toEqual((await expected("", "created_at DESC, id DESC")).slice(0, 5));
    expect(typeof first.body.nextCursor).toBe("string");
    const all = await get("?limit=1000");
    expect((all.body.runs as unknown[]).length).toBe(RUNS);
    expect(all.body.nextCursor).toBeNull();
  });

  it.each([
    ["statuses, newest first", { status: "waiting,held" }, "status IN ('waiting', 'held')", "created_at DESC, id DESC", []],
    ["a definition by updatedAt ascending", { definition: "def-3", sort: "updatedAt", order: "asc" }, "definition = ?", "updated_at ASC, id ASC", ["def-3"]],
    ["a session's turns", { sessionId: "s-0" }, "session_id = ?", "created_at DESC, id DESC", ["s-0"]],
    ["a parent's children, oldest first", { parentId: "parent-1", order: "asc" }, "parent_id = ?", "created_at ASC, id ASC", ["parent-1"]],
    ["a created range", { createdSince: String(SEED_T0 + 100), createdBefore: String(SEED_T0 + 300) }, "created_at >= ? AND created_at < ?", "created_at DESC, id DESC", [SEED_T0 + 100, SEED_T0 + 300]],
    ["an updated range by updatedAt", { updatedSince: String(SEED_T0 + 40_000), updatedBefore: String(SEED_T0 + 90_000), sort: "updatedAt" }, "updated_at >= ? AND updated_at < ?", "updated_at DESC, id DESC", [SEED_T0 + 40_000, SEED_T0 + 90_000]],
    // "run_" and the first 10 of 12 hex digits of the creation time: the first 26 seeded runs.
    ["an id prefix", { idPrefix: seedId(0).slice(0, 14) }, "substr(id, 1, 14) = ?", "created_at DESC, id DESC", [seedId(0).slice(0, 14)]],
    ["a status and a definition together", { status: "completed", definition: "def-0", sort: "updatedAt" }, "status = 'completed' AND definition = ?", "updated_at DESC, id DESC", ["def-0"]],
  ] as const)("%s: every page by cursor, together the database's answer in its order", async (_label, query, where, orderBy, params) => {
    const want = await expected(where, orderBy, ...params);
    expect(want.length).toBeGreaterThan(1);
    const { ids, pages } = await walk({ ...query, limit: "2" });
    expect(ids).toEqual(want);
    // A full last page has no cursor: the store reads one run past the page to know.
    expect(pages).toBe(Math.ceil(want.length / 2));
  });

  it("refuses a malformed filter, sort, limit or cursor with 400 naming the query field, and changes nothing", async () => {
    // A token's last use is marked at most once a minute: mark it now, so the digest shows any other write.
    expect((await get("?limit=1", served.tokens.viewer)).status).toBe(200);
    const before = await digestStore(served.s.stead.store);
    const byDefinition = await get("?definition=def-1&limit=1");
    const otherCursor = byDefinition.body.nextCursor as string;
    expect(typeof otherCursor).toBe("string");
    const cases: [string, string][] = [
      ["?status=sleeping", "query.status.0"],
      ["?status=", "query.status.0"],
      ["?limit=0", "query.limit"],
      ["?limit=1001", "query.limit"],
      ["?limit=ten", "query.limit"],
      ["?createdSince=yesterday", "query.createdSince"],
      ["?updatedBefore=-5", "query.updatedBefore"],
      ["?sort=name", "query.sort"],
      ["?order=sideways", "query.order"],
      ["?definition=", "query.definition"],
      [`?idPrefix=${"x".repeat(201)}`, "query.idPrefix"],
      ["?cursor=not%20a%20cursor", "query.cursor"],
      ["?cursor=bm90LWEtY3Vyc29y", "query.cursor"],
      // A real cursor, of another listing: the store refuses it rather than give another list.
      [`?definition=def-2&cursor=${otherCursor}`, "query.cursor"],
      [`?definition=def-1&sort=updatedAt&cursor=${otherCursor}`, "query.cursor"],
    ];
    for (const [query, field] of cases) {
      const r = await get(query, served.tokens.viewer);
      expect({ query, status: r.status, type: r.type, code: r.body.code, field: r.body.field }).toEqual({ query, status: 400, type: "application/problem+json", code: "STEAD_BAD_OPTION", field });
      expect(String(r.body.fix).length, query).toBeGreaterThan(10);
    }
    const unknown = await get("?surprise=1");
    expect({ status: unknown.status, code: unknown.body.code }).toEqual({ status: 400, code: "STEAD_BAD_OPTION" });
    expect(String(unknown.body.detail)).toContain("surprise");
    expect(await digestStore(served.s.stead.store)).toEqual(before);
  });

  it("the MCP list_runs tool takes the same filters and cursor: its pages together are the database's answer, with the total", async () => {
    const client = new Client({ name: "stead-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${served.server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${served.tokens.viewer}` } } }));
    try {
      const args = { status: ["completed", "failed"], sort: "updatedAt", order: "asc", createdSince: SEED_T0 + 50, limit: 4 };
      const want = await expected("status IN ('completed', 'failed') AND created_at >= ?", "updated_at ASC, id ASC", SEED_T0 + 50);
      const ids: string[] = [];
      for (let cursor: string | null = null; ; ) {
        const page: { runs: { id: string }[]; nextCursor: string | null; total: number } = await ok(client, "list_runs", { ...args, ...(cursor === null ? {} : { cursor }) });
        expect(page.total).toBe(want.length);
        ids.push(...page.runs.map((r) => r.id));
        cursor = page.nextCursor;
        if (cursor === null) break;
      }
      expect(ids).toEqual(want);
      const first: { nextCursor: string } = await ok(client, "list_runs", args);
      expect(await refused(client, "list_runs", { ...args, order: "desc", cursor: first.nextCursor })).toMatchObject({ code: "STEAD_BAD_OPTION", error: { field: "cursor" } });
    } finally {
      await client.close();
    }
  });

  it("is described in the OpenAPI document with every listing parameter", async () => {
    const doc = (await (await fetch(`${served.server.url}/api/v1/openapi.json`)).json()) as { paths: Record<string, { get?: { parameters: { name: string }[] } }> };
    expect(doc.paths["/api/v1/runs"]?.get?.parameters.map((p) => p.name).sort()).toEqual(
      ["status", "definition", "sessionId", "parentId", "createdSince", "createdBefore", "updatedSince", "updatedBefore", "idPrefix", "sort", "order", "limit", "cursor"].sort(),
    );
  });
});
