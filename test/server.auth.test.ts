/**
 * Every route of the API's table refuses a caller it must refuse, on both stores, over real HTTP
 * on 127.0.0.1: generated from ROUTES, so a route added later is covered without a line here.
 * For each route: no token, a wrong token, a malformed Authorization header, a revoked token and
 * an unknown browser-session cookie are 401 STEAD_TOKEN_REFUSED; a viewer taking an action only
 * an operator may is 403 STEAD_NOT_PERMITTED; and the store is exactly as it was (by digest).
 *
 * Two servers on one store: the loopback one serves reads without a token (so only its routes
 * that are not reads are refused without one); the one with `trustProxy` serves no read without a
 * token, and keys its bad-token slowdown on X-Forwarded-For, so each refused request below comes
 * from an address of its own and none waits behind the slowdown.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { may } from "../src/engine/access/roles.js";
import { workflow } from "../src/index.js";
import { tokensOf } from "../src/server/auth.js";
import { listen, type Listening } from "../src/server/listen.js";
import type { Route } from "../src/server/route-table.js";
import { ROUTES } from "../src/server/routes/index.js";
import { digestStore } from "../src/store/transfer/index.js";
import { STORE_KINDS } from "./helpers/both-stores.js";
import { servedStore, type Served } from "./helpers/served-store.js";

/** A value for each path parameter a route may name: a route with another one fails here until one is given. */
const SAMPLE_PARAMS: Record<string, (ids: { runId: string }) => string> = {
  runId: ({ runId }) => runId,
  wait: () => "ship",
  sessionId: () => "support-1",
  step: () => "prepare",
};

const parked = workflow("auth-ship", { version: "1" }, async (ctx) => {
  await ctx.step("prepare", () => "prepared");
  return ctx.approval("ship", {});
});

function concretePath(r: Route, ids: { runId: string }): string {
  return r.path.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    const sample = SAMPLE_PARAMS[name];
    if (!sample) throw new Error(`route ${r.method} ${r.path}: give its parameter "${name}" a sample value in SAMPLE_PARAMS`);
    return encodeURIComponent(sample(ids));
  });
}

const READS_WITHOUT_TOKEN = new Set(["runs.read", "events.read", "sessions.read", "workspace.read", "definitions.read"]);

describe.each(STORE_KINDS)("every route refuses whom it must on %s", (kind) => {
  let served: Served;
  let proxied: Listening;
  let runId = "";
  let revoked = "";
  let n = 0;
  beforeAll(async () => {
    served = await servedStore(kind, "server-auth");
    proxied = await listen({ stead: served.s.stead, authenticate: tokensOf(served.s.stead), port: 0, trustProxy: true });
    const run = await served.s.stead.run(parked, null, { followTimersMs: 0 });
    runId = run.id;
    revoked = (await served.s.stead.tokens.create({ name: "rita", role: "operator" })).token;
    await served.s.stead.tokens.revoke("rita");
  });
  afterAll(async () => {
    await proxied.close(1_000);
    await served.close();
  });

  const send = async (server: Listening, r: Route, headers: Record<string, string>) => {
    const res = await fetch(`${server.url}/api/v1${concretePath(r, { runId })}`, {
      method: r.method,
      headers: { ...headers, "x-forwarded-for": `198.51.100.${(n++ % 250) + 1}`, ...(r.method === "POST" ? { "content-type": "application/json" } : {}) },
      ...(r.method === "POST" ? { body: "{}" } : {}),
    });
    const text = await res.text();
    return { status: res.status, type: res.headers.get("content-type"), code: res.headers.get("content-type") === "application/problem+json" ? (JSON.parse(text) as { code: string }).code : null, text };
  };

  it("no token, a wrong, malformed or revoked token, an unknown session cookie: 401; a viewer taking an operator's action: 403; nothing changes", async () => {
    expect(ROUTES.length).toBeGreaterThan(15);
    // A token's last use is marked at most once a minute: mark both now, so the digest shows any other write.
    for (const token of [served.tokens.operator, served.tokens.viewer]) expect((await fetch(`${served.server.url}/api/v1/runs`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    const before = await digestStore(served.s.stead.store);

    const refusals: Record<string, Record<string, string>> = {
      "no token": {},
      "a wrong token": { authorization: `Bearer stead_${"A".repeat(43)}` },
      "a malformed header": { authorization: "Basic b2xpdmlhOnNlY3JldA==" },
      "a revoked token": { authorization: `Bearer ${revoked}` },
      "an unknown session cookie": { cookie: `stead_session_${proxied.port}=${"B".repeat(43)}` },
    };
    const seen: string[] = [];
    let viewerRefused = 0;
    for (const r of ROUTES) {
      const label = `${r.method} ${r.path}`;
      for (const [what, headers] of Object.entries(refusals)) {
        const res = await send(proxied, r, headers);
        expect({ label, what, status: res.status, type: res.type, code: res.code }).toEqual({ label, what, status: 401, type: "application/problem+json", code: "STEAD_TOKEN_REFUSED" });
        for (const secret of [served.tokens.operator, served.tokens.viewer, revoked]) expect(res.text).not.toContain(secret);
      }
      // On loopback, reads need no token; everything else does.
      if (!READS_WITHOUT_TOKEN.has(r.action)) {
        const res = await send(served.server, r, {});
        expect({ label, status: res.status, code: res.code }).toEqual({ label, status: 401, code: "STEAD_TOKEN_REFUSED" });
      }
      if (!may("viewer", r.action)) {
        for (const server of [served.server, proxied]) {
          const res = await send(server, r, { authorization: `Bearer ${served.tokens.viewer}` });
          expect({ label, status: res.status, code: res.code }).toEqual({ label, status: 403, code: "STEAD_NOT_PERMITTED" });
        }
        viewerRefused++;
      }
      seen.push(label);
    }
    expect(seen).toEqual(ROUTES.map((r) => `${r.method} ${r.path}`));
    expect(viewerRefused).toBe(ROUTES.filter((r) => r.method === "POST").length);
    expect(await digestStore(served.s.stead.store)).toEqual(before);
  });
});
