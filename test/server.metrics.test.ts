/**
 * `GET /metrics` over real HTTP on both stores: after runs complete, fail, park and are taken
 * over, the scrape's numbers match what the store holds, counted through a separate handle on the
 * database (rows of runs, waits, holds, and the `run.claimed` events the workers wrote).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workflow, type Worker } from "../src/index.js";
import { tokensOf } from "../src/server/auth.js";
import { listen, type Listening } from "../src/server/listen.js";
import { Metrics } from "../src/server/metrics.js";
import { onStore, STORE_KINDS, type OnStore } from "./helpers/both-stores.js";
import { deferred, waitUntil } from "./helpers/waiting.js";

/** The samples of a Prometheus text body: `name{labels}` → value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = /^(\S+?)(\{[^}]*\})? (\S+)$/.exec(line);
    if (m?.[1] && m[3]) out.set(`${m[1]}${m[2] ?? ""}`, Number(m[3]));
  }
  return out;
}

describe.each(STORE_KINDS)("/metrics on %s", (kind) => {
  let s: OnStore;
  let server: Listening;
  let viewer = "";
  const workers: Worker[] = [];
  const gate = deferred();
  let attempts = 0;
  const ok = workflow("m-ok", async (ctx) => ctx.step("one", () => 1));
  const failing = workflow("m-fail", async (ctx) => ctx.step("boom", () => {
    throw new Error("no");
  }));
  const waiting = workflow("m-wait", async (ctx) => {
    await ctx.step("before", () => 1);
    return ctx.approval("go", {});
  });
  // Its first attempt hangs until the end of the test: the run is taken over while it hangs.
  const hanging = workflow("m-hang", async (ctx) =>
    ctx.step("slow", async () => {
      if (attempts++ === 0) await gate.promise;
      return 2;
    }),
  );
  const definitions = [ok, failing, waiting, hanging];
  const metrics = { m: undefined as Metrics | undefined };

  beforeAll(async () => {
    s = await onStore(kind, "server-metrics");
    viewer = (await s.stead.tokens.create({ name: "victor", role: "viewer" })).token;
    metrics.m = new Metrics({ stead: s.stead });
    server = await listen({ stead: s.stead, authenticate: tokensOf(s.stead), port: 0, metrics: metrics.m });
  });
  afterAll(async () => {
    gate.resolve();
    for (const w of workers) w.abortAll();
    await server.close(1_000);
    await s.cleanup();
  });

  const worker = (leaseMs: number) => {
    const w = s.stead.worker({ definitions, pollMs: 20, graceMs: 200, leaseMs });
    w.on("error", () => undefined);
    metrics.m?.observeWorker(w);
    workers.push(w);
    return w;
  };
  const scrape = async (headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.url}/metrics`, { headers });
    return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
  };
  const count = async (sql: string, ...params: unknown[]) => Number((await s.rows(sql, ...params))[0]?.n ?? 0);

  it("counts runs by status, open waits and holds, claims, takeovers, lease losses and commits as the store holds them", async () => {
    const first = worker(2_000);
    const lost = deferred<string>();
    first.on("outcome", (id, o) => o.kind === "lease-lost" && lost.resolve(id));
    first.start();
    for (const d of [ok, ok, failing]) await s.stead.runs.start(d, {});
    await s.stead.runs.start(waiting, {});
    const { id: hung } = await s.stead.runs.start(hanging, {});
    await waitUntil("the runs to settle and the hanging one to run", async () => {
      const open = await count("SELECT count(*) AS n FROM runs WHERE status IN ('pending') OR (status = 'running' AND id <> ?)", hung);
      return open === 0 && attempts === 1;
    });
    // The hanging run's lease ends; a second worker takes it over, and the first loses it (the
    // first claims nothing more: it would take back its own run).
    first.setRunIds([]);
    const [row] = await s.rows("SELECT fence FROM runs WHERE id = ?", hung);
    const fence = Number(row?.fence);
    expect(await s.stead.store.expireLease(hung, fence, "the test ends it")).toBe(true);
    const second = worker(30_000);
    second.start();
    // The first worker is alive and may renew its expired lease before the second one claims the
    // run (nobody else holds it yet: a renewal is allowed). So the lease is ended again under the
    // same fence until the run is taken; a taken run's new fence is left alone.
    await waitUntil(
      "the taken-over run to complete",
      async () => {
        const [now] = await s.rows("SELECT status, fence FROM runs WHERE id = ?", hung);
        if (Number(now?.fence) === fence) await s.stead.store.expireLease(hung, fence, "the test ends it");
        return now?.status === "completed";
      },
      { timeoutMs: 45_000, pollMs: 100 },
    );
    expect(await lost.promise).toBe(hung);

    const res = await scrape();
    expect(res.status).toBe(200);
    expect(res.type).toMatch(/^text\/plain; version=0\.0\.4/);
    const got = samples(res.text);

    const statuses = await s.rows("SELECT status, count(*) AS n FROM runs GROUP BY status");
    expect(statuses.length).toBeGreaterThan(2);
    for (const st of ["pending", "running", "waiting", "held", "paused", "completed", "failed", "cancelled"]) {
      const n = Number(statuses.find((r) => r.status === st)?.n ?? 0);
      expect(got.get(`stead_runs{status="${st}"}`), `runs ${st}`).toBe(n);
    }
    expect(got.get('stead_runs{status="completed"}')).toBe(3);
    expect(got.get('stead_waits_open{kind="approval"}')).toBe(await count("SELECT count(*) AS n FROM waits WHERE status = 'open' AND kind = 'approval'"));
    expect(got.get('stead_waits_open{kind="approval"}')).toBe(1);
    expect(got.get('stead_holds_open{kind="process_failed"}')).toBe(await count("SELECT count(*) AS n FROM holds WHERE status = 'open' AND kind = 'process_failed'"));

    // Claims by each worker, from the run.claimed events each wrote.
    const claimedBy = async (w: Worker, onlyTakeovers: boolean) =>
      (await s.rows("SELECT data FROM events WHERE type = 'run.claimed'")).map((r) => JSON.parse(String(r.data)) as { worker: string; previousStatus: string }).filter((d) => d.worker === w.owner.workerId && (!onlyTakeovers || d.previousStatus === "running")).length;
    for (const w of [first, second]) {
      expect(got.get(`stead_claims_total{worker="${w.owner.workerId}"}`) ?? 0, "claims").toBe(await claimedBy(w, false));
      expect(got.get(`stead_takeovers_total{worker="${w.owner.workerId}"}`) ?? 0, "takeovers").toBe(await claimedBy(w, true));
    }
    expect(await claimedBy(second, true)).toBe(1);
    // The one run taken over from the first worker is the one lease it lost.
    expect(got.get(`stead_lease_losses_total{worker="${first.owner.workerId}"}`)).toBe(1);
    expect(got.get(`stead_lease_losses_total{worker="${second.owner.workerId}"}`) ?? 0).toBe(0);
    // Every completed step a worker ran was a commit it waited for.
    const stepsRun = await count("SELECT count(*) AS n FROM steps WHERE kind = 'step' AND status = 'completed'");
    const commits = [first, second].reduce((n, w) => n + (got.get(`stead_step_commit_seconds_count{worker="${w.owner.workerId}"}`) ?? 0), 0);
    expect(stepsRun).toBe(4);
    expect(commits).toBeGreaterThanOrEqual(stepsRun);
    expect(got.get("stead_event_stream_subscribers")).toBe(0);
    // Three real streams open, then closed by their clients: the gauge follows the server's hub.
    const clients = Array.from({ length: 3 }, () => new AbortController());
    const streams = await Promise.all(clients.map((c) => fetch(`${server.url}/api/v1/events/stream`, { signal: c.signal })));
    expect(streams.map((r) => r.status)).toEqual([200, 200, 200]);
    const gauge = async () => samples((await scrape()).text).get("stead_event_stream_subscribers");
    await waitUntil("three subscribers counted", async () => (await gauge()) === 3, { pollMs: 50 });
    for (const c of clients) c.abort();
    await waitUntil("the closed streams counted out", async () => (await gauge()) === 0, { pollMs: 50 });
  }, 120_000);

  it("is a viewer's read: anonymous on loopback, with a viewer's token; a bad token is refused", async () => {
    expect((await scrape({ authorization: `Bearer ${viewer}` })).status).toBe(200);
    const refused = await scrape({ authorization: "Bearer stead_not-a-real-token" });
    expect(refused.status).toBe(401);
    expect(refused.text).toContain("STEAD_TOKEN_REFUSED");
  });
});
