/**
 * The reads the web console needs, over real HTTP on 127.0.0.1, on both stores: who the caller is
 * (`/auth/me`) for a token and an anonymous loopback reader; a run's journal a page at a time and
 * a run's detail without its journal; open waits across runs (the approvals inbox); the tally.
 * Each answer is compared with the store's own rows; malformed queries are refused 400 naming the
 * field, with the store unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workflow, type WorkflowDefinition } from "../src/index.js";
import { actionsOf } from "../src/engine/access/roles.js";
import { digestStore } from "../src/store/transfer/index.js";
import { STORE_KINDS } from "./helpers/both-stores.js";
import { servedStore, type Served } from "./helpers/served-store.js";

const STEPS = 23;

describe.each(STORE_KINDS)("the console's reads over HTTP on %s", (kind) => {
  let served: Served;

  const long = workflow("console-long", async (ctx) => {
    for (let i = 0; i < STEPS; i++) await ctx.step(`step-${i}`, () => i);
    return ctx.approval("done", { steps: STEPS });
  });
  const asks = workflow("console-asks", async (ctx, input: { item: string }) => {
    await ctx.approval("ship", { item: input.item });
    return ctx.signal("arrived");
  });
  const hears = workflow("console-hears", async (ctx) => ctx.signal("go"));

  beforeAll(async () => {
    served = await servedStore(kind, "server-console-reads");
  });
  afterAll(async () => {
    await served.close();
  });

  const get = async (path: string, token?: string) => {
    const res = await fetch(`${served.server.url}/api/v1${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    return { status: res.status, type: res.headers.get("content-type"), body: (await res.json()) as Record<string, unknown> };
  };
  const parked = async <I>(def: WorkflowDefinition<I, unknown>, input: I) => {
    const run = await served.s.stead.run(def, input, { followTimersMs: 0 });
    expect(run.status).toBe("waiting");
    return run.id;
  };

  it("GET /auth/me: a token's name, role and every action its role may take; anonymous on loopback: null name and role, the reads", async () => {
    expect((await get("/auth/me", served.tokens.operator)).body).toEqual({ name: "olivia", role: "operator", actions: actionsOf("operator") });
    expect((await get("/auth/me", served.tokens.viewer)).body).toEqual({ name: "victor", role: "viewer", actions: actionsOf("viewer") });
    const anonymous = await get("/auth/me");
    expect(anonymous).toMatchObject({ status: 200, body: { name: null, role: null } });
    expect([...(anonymous.body.actions as string[])].sort()).toEqual([...actionsOf("viewer")].sort());
    expect(anonymous.body.actions).not.toContain("waits.approve");
  });

  it("GET /runs/:id/journal pages the journal in journal order, with its length; ?journal=false answers the detail without it", async () => {
    const id = await parked(long, null);
    const seqs = (await served.s.rows("SELECT step_id FROM steps WHERE run_id = ? ORDER BY seq", id)).map((r) => String(r.step_id));
    expect(seqs.length).toBe(STEPS + 1);
    const first = await get(`/runs/${id}/journal?limit=10`, served.tokens.viewer);
    expect(first.status).toBe(200);
    expect(Object.keys(first.body).sort()).toEqual(["offset", "steps", "total"]);
    expect(first.body).toMatchObject({ total: seqs.length, offset: 0 });
    const walked: string[] = [];
    for (let offset = 0; offset < seqs.length; offset += 10) {
      const page = await get(`/runs/${id}/journal?offset=${offset}&limit=10`);
      expect(page.body).toMatchObject({ total: seqs.length, offset });
      walked.push(...(page.body.steps as { id: string }[]).map((s) => s.id));
    }
    expect(walked).toEqual(seqs);
    expect((await get(`/runs/${id}/journal?offset=${seqs.length}`)).body).toEqual({ steps: [], total: seqs.length, offset: seqs.length });
    // `step`: the page holding that step (a pasted link to a step finds its page), offset a multiple of the limit.
    const target = seqs[23]!;
    expect((await get(`/runs/${id}/journal?step=${encodeURIComponent(target)}&limit=10`)).body).toMatchObject({ offset: 20, total: seqs.length });
    expect(((await get(`/runs/${id}/journal?step=${encodeURIComponent(target)}&limit=10`)).body.steps as { id: string }[]).map((s) => s.id)).toEqual(seqs.slice(20, 30));
    const missing = await get(`/runs/${id}/journal?step=no-such-step`);
    expect({ status: missing.status, code: missing.body.code }).toEqual({ status: 404, code: "STEAD_STEP_NOT_FOUND" });
    expect((await get(`/runs/${id}/journal?step=${encodeURIComponent(target)}&offset=0`)).status).toBe(400);
    const byDefault = await get(`/runs/${id}/journal`);
    expect((byDefault.body.steps as unknown[]).length).toBe(seqs.length);
    expect(byDefault.body.steps).toEqual((await get(`/runs/${id}`)).body.journal);

    const light = await get(`/runs/${id}?journal=false`);
    expect(light.status).toBe(200);
    expect(light.body).not.toHaveProperty("journal");
    expect(light.body).toMatchObject({ run: { id, status: "waiting" }, journalLength: seqs.length, waits: [{ name: "done", status: "open" }] });
    expect(light.body.why).toBeDefined();
    expect((await get(`/runs/${id}?journal=true`)).body.journal).toHaveLength(seqs.length);
  });

  it("GET /waits: the open waits across runs, newest first, with their runs; kind and limit filter; a decided wait leaves", async () => {
    const a = await parked(asks, { item: "a" });
    const b = await parked(asks, { item: "b" });
    const g = await parked(hears, null);
    const open = async (k?: string) =>
      (await served.s.rows(`SELECT run_id, name, kind, created_at FROM waits WHERE status = 'open'${k ? ` AND kind = '${k}'` : ""}`)).map((r) => ({ runId: String(r.run_id), name: String(r.name), kind: String(r.kind), createdAt: Number(r.created_at) }));
    const key = (w: { runId: string; name: string }) => `${w.runId}/${w.name}`;

    const all = await get("/waits", served.tokens.viewer);
    expect(all.status).toBe(200);
    expect(all.body.truncated).toBe(false);
    const waits = all.body.waits as { runId: string; name: string; kind: string; createdAt: number; definition: string; request: unknown; runStatus: string }[];
    expect(waits.map(key).sort()).toEqual((await open()).map(key).sort());
    for (let i = 1; i < waits.length; i++) expect(waits[i - 1]!.createdAt).toBeGreaterThanOrEqual(waits[i]!.createdAt);
    expect(waits.find((w) => w.runId === b)).toMatchObject({ name: "ship", kind: "approval", definition: "console-asks", request: { item: "b" }, runStatus: "waiting", status: "open" });
    expect(waits.find((w) => w.runId === g)).toMatchObject({ name: "go", kind: "signal", definition: "console-hears" });

    const approvals = (await get("/waits?kind=approval")).body.waits as typeof waits;
    expect(approvals.map(key).sort()).toEqual((await open("approval")).map(key).sort());
    expect(approvals.every((w) => w.kind === "approval")).toBe(true);
    const two = (await get("/waits?kind=approval&limit=2")).body.waits as typeof waits;
    expect(two.map(key)).toEqual(approvals.slice(0, 2).map(key));

    expect((await fetch(`${served.server.url}/api/v1/runs/${a}/waits/ship/approve`, { method: "POST", headers: { authorization: `Bearer ${served.tokens.operator}`, "content-type": "application/json" }, body: "{}" })).status).toBe(200);
    const after = (await get("/waits?kind=approval")).body.waits as typeof waits;
    expect(after.map(key)).not.toContain(`${a}/ship`);
    expect(after.map(key).sort()).toEqual((await open("approval")).map(key).sort());
  });

  it("GET /tally: runs by status, open waits and holds by kind, as the store's rows count them", async () => {
    const t = await get("/tally", served.tokens.viewer);
    expect(t.status).toBe(200);
    const count = async (sql: string) => Object.fromEntries((await served.s.rows(sql)).map((r) => [String(r.k), Number(r.n)]));
    expect(t.body).toEqual({
      runs: await count("SELECT status AS k, COUNT(*) AS n FROM runs GROUP BY status"),
      openWaits: await count("SELECT kind AS k, COUNT(*) AS n FROM waits WHERE status = 'open' GROUP BY kind"),
      openHolds: await count("SELECT kind AS k, COUNT(*) AS n FROM holds WHERE status = 'open' GROUP BY kind"),
    });
    expect((t.body.runs as Record<string, number>).waiting).toBeGreaterThan(0);
  });

  it("refuses a malformed page, kind or flag 400 naming the query field, and an unknown run 404, changing nothing", async () => {
    const id = await parked(asks, { item: "refused" });
    for (const token of [served.tokens.operator, served.tokens.viewer]) expect((await get("/runs", token)).status).toBe(200);
    const before = await digestStore(served.s.stead.store);
    const cases: [string, number, string, string?][] = [
      [`/runs/${id}/journal?limit=0`, 400, "STEAD_BAD_OPTION", "query.limit"],
      [`/runs/${id}/journal?limit=1001`, 400, "STEAD_BAD_OPTION", "query.limit"],
      [`/runs/${id}/journal?offset=-1`, 400, "STEAD_BAD_OPTION", "query.offset"],
      [`/runs/${id}/journal?offset=two`, 400, "STEAD_BAD_OPTION", "query.offset"],
      [`/runs/${id}/journal?page=2`, 400, "STEAD_BAD_OPTION", "query"],
      [`/runs/no-such-run/journal`, 404, "STEAD_RUN_NOT_FOUND"],
      [`/runs/${id}?journal=no`, 400, "STEAD_BAD_OPTION", "query.journal"],
      [`/waits?kind=email`, 400, "STEAD_BAD_OPTION", "query.kind"],
      [`/waits?limit=1001`, 400, "STEAD_BAD_OPTION", "query.limit"],
    ];
    for (const [path, status, code, field] of cases) {
      const r = await get(path, served.tokens.viewer);
      expect({ path, status: r.status, type: r.type, code: r.body.code }).toEqual({ path, status, type: "application/problem+json", code });
      if (field !== undefined) expect(String(r.body.field)).toMatch(new RegExp(`^${field.replace(".", "\\.")}`));
    }
    expect(await digestStore(served.s.stead.store)).toEqual(before);
  });
});
