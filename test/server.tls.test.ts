/**
 * `stead serve` as a real process with a browser login: over HTTPS (a self-signed certificate
 * made here by the machine's openssl, trusted by this test alone), the printed one-time URL's token
 * is exchanged for a Secure cookie that then reads the store; SIGTERM revokes the login token, and
 * a start revokes the ones a server that did not stop left behind. With --trust-proxy the URL
 * names the public https host and a forwarded https request gets a Secure cookie. Without a
 * terminal (and no --login-url) no login token is made.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { request } from "node:https";
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { cli, requireBuild, spawnCli, tempDir, until } from "./cli-helpers.js";

beforeAll(requireBuild);

function selfSigned(dir: string): { cert: string; key: string } {
  const cert = join(dir, "cert.pem");
  const key = join(dir, "key.pem");
  try {
    execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], { stdio: "pipe" });
  } catch (e) {
    throw new Error(`this test makes its certificate with openssl, which failed or is missing: ${(e as Error).message}`);
  }
  return { cert, key };
}

function https(url: string, ca: string, o: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: o.method ?? "GET", headers: o.headers ?? {}, ca }, (res) => {
      let body = "";
      res.on("data", (b: Buffer) => (body += b.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(o.body);
  });
}

const tokenRows = (db: string) => {
  const file = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return file.prepare("SELECT name, revoked_at, revoked_by FROM tokens ORDER BY created_at").all() as { name: string; revoked_at: number | null; revoked_by: string | null }[];
  } finally {
    file.close();
  }
};

describe("stead serve's browser login", () => {
  it("over HTTPS: the printed URL's token is exchanged once for a Secure cookie; SIGTERM revokes it, and a start revokes stale ones", async () => {
    const dir = tempDir();
    const db = join(dir, ".stead", "stead.db");
    const { cert, key } = selfSigned(dir);
    const ca = readFileSync(cert, "utf8");
    expect((await cli(["tokens", "create", "--name", "serve-login.left-behind", "--role", "operator"], dir)).code).toBe(0);
    // As a server that died 13 hours ago would have left it.
    const file = new Database(db);
    file.prepare("UPDATE tokens SET created_at = ? WHERE name = 'serve-login.left-behind'").run(Date.now() - 13 * 3600_000);
    file.close();

    const server = spawnCli(["serve", "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key, "--login-url"], dir);
    const url = await until("the login URL", () => /sign in a browser .*: (https:\/\/127\.0\.0\.1:\d+)\/#token=(stead_[A-Za-z0-9_-]+)/.exec(server.stdout()) ?? undefined);
    const [, base = "", token = ""] = url;
    expect(server.stdout()).toContain("revoked login token serve-login.left-behind");

    expect((await https(`${base}/healthz`, ca)).status).toBe(200);
    const exchange = () => https(`${base}/api/v1/auth/session`, ca, { method: "POST", headers: { "content-type": "application/json", origin: base }, body: JSON.stringify({ token }) });
    const signedIn = await exchange();
    expect(signedIn.status).toBe(200);
    const setCookie = String(signedIn.headers["set-cookie"] ?? "");
    expect(setCookie).toMatch(/^stead_session_\d+=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/);
    expect(setCookie + signedIn.body).not.toContain(token);
    const cookie = setCookie.split(";")[0] ?? "";
    const runs = await https(`${base}/api/v1/runs`, ca, { headers: { cookie } });
    expect(runs.status).toBe(200);
    expect((await exchange()).status).toBe(401);

    const live = tokenRows(db).filter((t) => t.name.startsWith("serve-login.") && t.revoked_at === null);
    expect(live.map((t) => t.name)).toEqual([expect.stringMatching(/^serve-login\.[0-9a-z]+\.[0-9a-f]{8}$/)]);
    expect(tokenRows(db).find((t) => t.name === "serve-login.left-behind")).toMatchObject({ revoked_by: "stead serve", revoked_at: expect.any(Number) as number });

    server.child.kill("SIGTERM");
    const end = await server.done;
    expect(end.code).toBe(0);
    expect(tokenRows(db).find((t) => t.name === live[0]?.name)).toMatchObject({ revoked_by: "stead serve", revoked_at: expect.any(Number) as number });
    expect(end.stderr).not.toContain(token);
    expect(end.stdout.split(token).length).toBe(2);
  });

  it("--trust-proxy: the login URL names the public https host; X-Forwarded-Proto makes the cookie Secure; no read without a token", async () => {
    const dir = tempDir();
    const server = spawnCli(["serve", "--listen", "127.0.0.1:0", "--trust-proxy", "--host", "stead.example.com", "--login-url"], dir);
    const [, port = "", token = ""] = await until("the ports and login URL", () => {
      const listening = /on http:\/\/127\.0\.0\.1:(\d+)\/api\/v1/.exec(server.stdout())?.[1];
      const login = /sign in a browser .*: https:\/\/stead\.example\.com\/#token=(stead_[A-Za-z0-9_-]+)/.exec(server.stdout())?.[1];
      return listening && login ? ["", listening, login] : undefined;
    });
    const viaProxy = (path: string, o: { method?: string; headers?: Record<string, string>; body?: string } = {}) =>
      new Promise<{ status: number; cookie: string }>((resolve, reject) => {
        const req = httpRequest({ host: "127.0.0.1", port: Number(port), path, method: o.method ?? "GET", headers: { host: "stead.example.com", "x-forwarded-proto": "https", "x-forwarded-for": "203.0.113.5", ...(o.headers ?? {}) } }, (res) => {
          res.resume();
          res.on("end", () => resolve({ status: res.statusCode ?? 0, cookie: String(res.headers["set-cookie"] ?? "") }));
        });
        req.on("error", reject);
        req.end(o.body);
      });
    expect((await viaProxy("/api/v1/runs")).status).toBe(401);
    const signedIn = await viaProxy("/api/v1/auth/session", { method: "POST", headers: { "content-type": "application/json", origin: "https://stead.example.com" }, body: JSON.stringify({ token }) });
    expect(signedIn.status).toBe(200);
    expect(signedIn.cookie).toMatch(/; Secure$/);
    expect((await viaProxy("/api/v1/runs", { headers: { cookie: signedIn.cookie.split(";")[0] ?? "" } })).status).toBe(200);
    server.child.kill("SIGTERM");
    expect((await server.done).code).toBe(0);
  });

  it("makes no login token when its output is not a terminal and --login-url is not given", async () => {
    const dir = tempDir();
    expect((await cli(["tokens", "create", "--name", "ann", "--role", "admin"], dir)).code).toBe(0);
    const server = spawnCli(["serve", "--listen", "127.0.0.1:0"], dir);
    const url = await until("the server's URL", () => /on (http:\/\/[^\s]+)\/api\/v1/.exec(server.stdout())?.[1]);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    server.child.kill("SIGTERM");
    const end = await server.done;
    expect(end.code).toBe(0);
    expect(end.stdout).not.toContain("#token=");
    expect(tokenRows(join(dir, ".stead", "stead.db")).map((t) => t.name)).toEqual(["ann"]);
  });
});
