/**
 * Issue 39, item 16: the Origin a request carries must be one of the exact origins the server
 * serves, scheme included. A plain HTTP server serves `http://<name>:<port>` only, a TLS server
 * `https://<name>:<port>` only, so a page served over the other scheme (another server on the
 * same host and port number, a downgraded or upgraded copy) cannot drive a signed-in browser.
 * Asserted from the HTTP answers of real servers on 127.0.0.1 and from the store's rows.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { request } from "node:https";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workflow } from "../../src/index.js";
import { tokensOf } from "../../src/server/auth.js";
import { listen, type Listening } from "../../src/server/listen.js";
import { STORE_KINDS } from "../helpers/both-stores.js";
import { servedStore, type Served } from "../helpers/served-store.js";
import { tempDir } from "../helpers/temp-store.js";

const shipped = workflow("origin-ship", { version: "1" }, async (ctx) => {
  await ctx.step("prepare", () => "prepared");
  return ctx.approval("ship", {});
});

/** A self-signed certificate for 127.0.0.1 and localhost, made by the machine's openssl. */
function selfSigned(dir: string): { cert: string; key: string } {
  const cert = join(dir, "cert.pem");
  const key = join(dir, "key.pem");
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"], { stdio: "pipe" });
  return { cert: readFileSync(cert, "utf8"), key: readFileSync(key, "utf8") };
}

interface Answer {
  status: number;
  code: string | undefined;
  cookie: string;
}

async function answerOf(res: { status: number; body: string; setCookie: string }): Promise<Answer> {
  let code: string | undefined;
  try {
    code = (JSON.parse(res.body) as { code?: string }).code;
  } catch {
    code = undefined;
  }
  return Promise.resolve({ status: res.status, code, cookie: /^stead_session_\d+=([^;]*)/.exec(res.setCookie)?.[1] ?? "" });
}

describe.each(STORE_KINDS)("Origin is matched with its scheme on %s", (kind) => {
  let served: Served;
  let tls: Listening;
  let ca = "";
  const d = tempDir("stead-origin-");
  beforeAll(async () => {
    served = await servedStore(kind, "hostile-origin");
    const pem = selfSigned(d.dir);
    ca = pem.cert;
    tls = await listen({ stead: served.s.stead, authenticate: tokensOf(served.s.stead), port: 0, tls: pem, console: false });
  });
  afterAll(async () => {
    await tls.close(1_000);
    await served.close();
    d.remove();
  });

  /** A POST over the server's own scheme (node's clients: fetch will not send a forged Origin over TLS with a private CA). */
  function post(server: Listening, path: string, headers: Record<string, string>, body = "{}"): Promise<Answer> {
    if (server.url.startsWith("http:")) {
      return fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body }).then(async (r) => answerOf({ status: r.status, body: await r.text(), setCookie: r.headers.get("set-cookie") ?? "" }));
    }
    return new Promise((resolve, reject) => {
      const req = request(`${server.url}${path}`, { method: "POST", ca, headers: { "content-type": "application/json", ...headers } }, (res) => {
        let text = "";
        res.on("data", (b: Buffer) => (text += b.toString()));
        res.on("end", () => void answerOf({ status: res.statusCode ?? 0, body: text, setCookie: String(res.headers["set-cookie"] ?? "") }).then(resolve, reject));
      });
      req.on("error", reject);
      req.end(body);
    });
  }

  const openWait = async (runId: string) => served.s.rows("SELECT status, resolved_by FROM waits WHERE run_id = ? AND name = 'ship'", runId);

  it("a plain HTTP server refuses a signed-in POST whose Origin is https:// on its own host and port, and takes http://", async () => {
    const server = served.server;
    const run = await served.s.stead.run(shipped, null, { followTimersMs: 0 });
    const signedIn = await post(server, "/api/v1/auth/session", {}, JSON.stringify({ token: served.tokens.operator }));
    expect(signedIn.status).toBe(200);
    const cookie = `stead_session_${server.port}=${signedIn.cookie}`;
    const approve = (origin: string) => post(server, `/api/v1/runs/${run.id}/waits/ship/approve`, { cookie, origin });
    const waiting = await openWait(run.id);

    for (const origin of [`https://127.0.0.1:${server.port}`, `https://localhost:${server.port}`, `HTTPS://127.0.0.1:${server.port}`]) {
      expect(await approve(origin), origin).toMatchObject({ status: 403, code: "STEAD_ORIGIN_REFUSED" });
    }
    // A bearer caller is held to the same check: the Origin names a page the server does not serve.
    const bearer = await post(server, `/api/v1/runs/${run.id}/waits/ship/approve`, { authorization: `Bearer ${served.tokens.operator}`, origin: `https://127.0.0.1:${server.port}` });
    expect(bearer).toMatchObject({ status: 403, code: "STEAD_ORIGIN_REFUSED" });
    // Signing in from such a page is refused too, and sets no cookie.
    const foreignSignIn = await post(server, "/api/v1/auth/session", { origin: `https://localhost:${server.port}` }, JSON.stringify({ token: served.tokens.operator }));
    expect(foreignSignIn).toMatchObject({ status: 403, code: "STEAD_ORIGIN_REFUSED", cookie: "" });
    expect(await openWait(run.id)).toEqual(waiting);

    expect((await approve(`http://127.0.0.1:${server.port}`)).status).toBe(200);
    expect(await openWait(run.id)).toEqual([{ status: "resolved", resolved_by: "olivia" }]);
  });

  it("a TLS server refuses a signed-in POST whose Origin is http:// on its own host and port, and takes https://", async () => {
    const run = await served.s.stead.run(shipped, null, { followTimersMs: 0 });
    const signedIn = await post(tls, "/api/v1/auth/session", {}, JSON.stringify({ token: served.tokens.operator }));
    expect(signedIn.status).toBe(200);
    const cookie = `stead_session_${tls.port}=${signedIn.cookie}`;
    const approve = (origin: string) => post(tls, `/api/v1/runs/${run.id}/waits/ship/approve`, { cookie, origin });
    const waiting = await openWait(run.id);

    for (const origin of [`http://127.0.0.1:${tls.port}`, `http://localhost:${tls.port}`]) {
      expect(await approve(origin), origin).toMatchObject({ status: 403, code: "STEAD_ORIGIN_REFUSED" });
    }
    expect(await openWait(run.id)).toEqual(waiting);

    expect((await approve(`https://localhost:${tls.port}`)).status).toBe(200);
    expect(await openWait(run.id)).toEqual([{ status: "resolved", resolved_by: "olivia" }]);
  });
});
