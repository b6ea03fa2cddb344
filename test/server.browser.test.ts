/**
 * Browser sessions and a TLS-terminating proxy in front, over real HTTP on 127.0.0.1, on both
 * stores: a token exchanged for a cookie that holds no token, the cookie authenticating as that
 * token (a decision recorded by its name), its mutating requests held to the Origin check, logout,
 * revocation ending it, the one-time login token; and X-Forwarded-Proto / X-Forwarded-For
 * honoured with `trustProxy` only (the cookie's Secure flag, the address the slowdown counts).
 */
import { createHash } from "node:crypto";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workflow } from "../src/index.js";
import { tokensOf } from "../src/server/auth.js";
import { listen, type Listening } from "../src/server/listen.js";
import { BadTokenSlowdown } from "../src/server/slowdown.js";
import { digestStore } from "../src/store/transfer/index.js";
import { STORE_KINDS } from "./helpers/both-stores.js";
import { servedStore, type Served } from "./helpers/served-store.js";

const shipped = workflow("browser-ship", { version: "1" }, async (ctx) => {
  await ctx.step("prepare", () => "prepared");
  return ctx.approval("ship", {});
});

/** A request with any Host header (fetch will not send another): status, headers, body. */
function raw(url: string, o: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: o.method ?? "GET", headers: o.headers ?? {} }, (res) => {
      let body = "";
      res.on("data", (b: Buffer) => (body += b.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(o.body);
  });
}

describe.each(STORE_KINDS)("browser sessions and a trusted proxy on %s", (kind) => {
  let served: Served;
  /** Behind a "proxy": no anonymous reads, forwarded headers honoured, stead.example.com served. */
  let proxied: Listening;
  const proxiedSlowdown = new BadTokenSlowdown();
  const plainSlowdown = new BadTokenSlowdown();
  let plain: Listening;
  let login = { name: "", token: "" };
  const logged: string[] = [];
  beforeAll(async () => {
    served = await servedStore(kind, "server-browser");
    const created = await served.s.stead.tokens.create({ name: "serve-login.test", role: "operator" });
    login = { name: created.name, token: created.token };
    const common = { stead: served.s.stead, authenticate: tokensOf(served.s.stead), port: 0, logError: (line: string) => logged.push(line) };
    // The plain sign-in page (served where the console is not built) is what this server answers at `/`.
    proxied = await listen({ ...common, trustProxy: true, extraHosts: ["stead.example.com"], slowdown: proxiedSlowdown, loginTokenName: login.name, console: false });
    plain = await listen({ ...common, slowdown: plainSlowdown });
  });
  afterAll(async () => {
    await proxied.close(1_000);
    await plain.close(1_000);
    await served.close();
  });

  const exchange = (server: Listening, token: string, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/api/v1/auth/session`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ token }) });
  // Each server's cookie is named for its port: browsers send a host's cookies to all its ports.
  const cookieOf = (res: Response) => /^stead_session_\d+=([^;]*)/.exec(res.headers.get("set-cookie") ?? "")?.[1] ?? "";
  const jar = (server: Listening, secret: string) => `stead_session_${server.port}=${secret}`;

  it("a token exchanged for a cookie that holds no token; the cookie acts as the token's name, POSTs only with the server's Origin; logout and revocation end it", async () => {
    const run = await served.s.stead.run(shipped, null, { followTimersMs: 0 });
    const res = await exchange(proxied, served.tokens.operator);
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(JSON.parse(text)).toMatchObject({ name: "olivia", role: "operator" });
    const setCookie = res.headers.get("set-cookie") ?? "";
    expect(setCookie.split("; ").slice(1).sort()).toEqual(["HttpOnly", "Max-Age=43200", "Path=/", "SameSite=Strict"]);
    const cookie = cookieOf(res);
    expect(cookie).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(setCookie + text).not.toContain(served.tokens.operator);

    // Without a token or cookie this server serves nothing; with the cookie, what the token may.
    expect((await fetch(`${proxied.url}/api/v1/runs`)).status).toBe(401);
    expect((await fetch(`${proxied.url}/api/v1/runs`, { headers: { cookie: jar(proxied, cookie) } })).status).toBe(200);

    const approve = (headers: Record<string, string>) => fetch(`${proxied.url}/api/v1/runs/${run.id}/waits/ship/approve`, { method: "POST", headers: { cookie: jar(proxied, cookie), "content-type": "application/json", ...headers }, body: "{}" });
    const before = await digestStore(served.s.stead.store);
    const noOrigin = await approve({});
    expect([noOrigin.status, ((await noOrigin.json()) as { code: string }).code]).toEqual([403, "STEAD_ORIGIN_REFUSED"]);
    expect((await approve({ origin: "https://evil.example" })).status).toBe(403);
    expect(await digestStore(served.s.stead.store)).toEqual(before);
    const approved = await approve({ origin: proxied.url });
    expect(approved.status).toBe(200);
    expect(await served.s.rows("SELECT resolved_by FROM waits WHERE run_id = ? AND name = 'ship'", run.id)).toEqual([{ resolved_by: "olivia" }]);

    const out = await fetch(`${proxied.url}/api/v1/auth/logout`, { method: "POST", headers: { cookie: jar(proxied, cookie), origin: proxied.url } });
    expect(out.status).toBe(200);
    expect(out.headers.get("set-cookie")).toMatch(new RegExp(`^stead_session_${proxied.port}=; .*Max-Age=0`));
    const after = await fetch(`${proxied.url}/api/v1/runs`, { headers: { cookie: jar(proxied, cookie) } });
    expect([after.status, ((await after.json()) as { code: string }).code]).toEqual([401, "STEAD_TOKEN_REFUSED"]);

    // A session of a token revoked since ends with it.
    const ted = await served.s.stead.tokens.create({ name: "ted", role: "viewer" });
    const tedCookie = cookieOf(await exchange(proxied, ted.token));
    expect((await fetch(`${proxied.url}/api/v1/runs`, { headers: { cookie: jar(proxied, tedCookie) } })).status).toBe(200);
    await served.s.stead.tokens.revoke("ted");
    expect((await fetch(`${proxied.url}/api/v1/runs`, { headers: { cookie: jar(proxied, tedCookie) } })).status).toBe(401);

    // Bad exchanges.
    expect((await exchange(proxied, `stead_${"A".repeat(43)}`)).status).toBe(401);
    expect((await exchange(proxied, ted.token)).status).toBe(401);
    const doc = (await (await fetch(`${proxied.url}/api/v1/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/api/v1/auth/session", "/api/v1/auth/logout", "/api/v1/sessions/{sessionId}/messages", "/api/v1/runs/{runId}/snapshots/{step}/tarball"]));
    const empty = await fetch(`${proxied.url}/api/v1/auth/session`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect([empty.status, ((await empty.json()) as { field: string }).field]).toEqual([400, "body.token"]);
    expect(logged.join("\n")).not.toContain(served.tokens.operator);
  });

  it("without a built console, the page the login URL opens: static HTML whose one script is the one its CSP allows, which reads the token from the fragment only", async () => {
    const res = await fetch(`${proxied.url}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await res.text();
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1] ?? "");
    expect(scripts).toHaveLength(1);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain(`script-src 'sha256-${createHash("sha256").update(scripts[0] ?? "").digest("base64")}'`);
    expect(csp).toMatch(/default-src 'none'/);
    expect(scripts[0]).toContain("location.hash");
    expect(scripts[0]).toContain("history.replaceState");
    expect(scripts[0]).not.toMatch(/innerHTML|location\.search/);
  });

  it("the one-time login token is exchanged once and is never a bearer token", async () => {
    const bearer = await fetch(`${proxied.url}/api/v1/runs`, { headers: { authorization: `Bearer ${login.token}` } });
    expect([bearer.status, ((await bearer.json()) as { code: string }).code]).toEqual([401, "STEAD_TOKEN_REFUSED"]);
    // Another server on the same store did not print it: it refuses it as a bearer token and at exchange.
    const before = await digestStore(served.s.stead.store);
    const elsewhere = await fetch(`${served.server.url}/api/v1/runs/none/pause`, { method: "POST", headers: { authorization: `Bearer ${login.token}` } });
    expect([elsewhere.status, ((await elsewhere.json()) as { code: string }).code]).toEqual([401, "STEAD_TOKEN_REFUSED"]);
    const exchangedElsewhere = await exchange(served.server, login.token);
    expect([exchangedElsewhere.status, exchangedElsewhere.headers.get("set-cookie")]).toEqual([401, null]);
    expect(await digestStore(served.s.stead.store)).toEqual(before);
    const first = await exchange(proxied, login.token);
    expect(first.status).toBe(200);
    expect((await fetch(`${proxied.url}/api/v1/runs`, { headers: { cookie: jar(proxied, cookieOf(first)) } })).status).toBe(200);
    const second = await exchange(proxied, login.token);
    expect([second.status, ((await second.json()) as { detail: string }).detail]).toEqual([401, "this login link was used already"]);
  });

  it("X-Forwarded-Proto makes the cookie Secure, and X-Forwarded-For is the address the slowdown counts, only with trustProxy", async () => {
    const forwarded = { "x-forwarded-proto": "http, https", "x-forwarded-for": "203.0.113.9, 203.0.113.7" };
    expect((await exchange(proxied, served.tokens.viewer, forwarded)).headers.get("set-cookie")).toMatch(/; Secure$/);
    expect((await exchange(proxied, served.tokens.viewer, { "x-forwarded-proto": "http" })).headers.get("set-cookie")).not.toMatch(/Secure/);
    expect((await exchange(plain, served.tokens.viewer, forwarded)).headers.get("set-cookie")).not.toMatch(/Secure/);

    const bad = { authorization: `Bearer stead_${"C".repeat(43)}`, ...forwarded };
    // A valid token does not forget an address's failures: the earlier tests' bad tokens from 127.0.0.1 still count.
    const loopbackFailures = [proxiedSlowdown.failuresOf("127.0.0.1"), plainSlowdown.failuresOf("127.0.0.1")];
    expect((await fetch(`${proxied.url}/api/v1/runs`, { headers: bad })).status).toBe(401);
    expect([proxiedSlowdown.failuresOf("203.0.113.7"), proxiedSlowdown.failuresOf("203.0.113.9"), proxiedSlowdown.failuresOf("127.0.0.1")]).toEqual([1, 0, loopbackFailures[0]]);
    expect((await fetch(`${plain.url}/api/v1/runs`, { headers: bad })).status).toBe(401);
    expect([plainSlowdown.failuresOf("203.0.113.7"), plainSlowdown.failuresOf("127.0.0.1")]).toEqual([0, (loopbackFailures[1] ?? 0) + 1]);

    // A proxy on 443 passes its public name without a port, and the browser's Origin is https.
    const publicName = await raw(`${proxied.url}/api/v1/runs`, { headers: { host: "stead.example.com", authorization: `Bearer ${served.tokens.viewer}` } });
    expect(publicName.status).toBe(200);
    const fromPage = await raw(`${proxied.url}/api/v1/auth/logout`, { method: "POST", headers: { host: "stead.example.com", origin: "https://stead.example.com" } });
    expect(fromPage.status).toBe(200);
    expect((await raw(`${plain.url}/api/v1/runs`, { headers: { host: "stead.example.com" } })).status).toBe(403);
  });
});
