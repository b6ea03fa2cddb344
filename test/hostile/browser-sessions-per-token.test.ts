/**
 * Issue 39, item 6: browser sessions are bounded per token, and a token's surplus evicts only that
 * token's own oldest sessions. A viewer exchanging its token 1,001 times (the server once kept
 * 1,000 sessions in all, the oldest dropped first) must not sign anyone else out. Asserted from
 * the HTTP answers of a real server on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BrowserSessions, MAX_PER_TOKEN, MAX_SESSIONS } from "../../src/server/browser-sessions.js";
import { STORE_KINDS } from "../helpers/both-stores.js";
import { servedStore, type Served } from "../helpers/served-store.js";

describe.each(STORE_KINDS)("browser sessions per token on %s", (kind) => {
  let served: Served;
  beforeAll(async () => {
    served = await servedStore(kind, "hostile-sessions");
  });
  afterAll(async () => {
    await served.close();
  });

  async function signIn(token: string): Promise<string> {
    const res = await fetch(`${served.server.url}/api/v1/auth/session`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token }) });
    expect(res.status).toBe(200);
    const secret = /^stead_session_\d+=([^;]*)/.exec(res.headers.get("set-cookie") ?? "")?.[1];
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    return `stead_session_${served.server.port}=${secret ?? ""}`;
  }

  /** Who the cookie signs in as: its token's name, or the refusal's status and code. */
  async function whoIs(cookie: string): Promise<string> {
    const res = await fetch(`${served.server.url}/api/v1/auth/me`, { headers: { cookie } });
    const body = (await res.json()) as { name?: string; code?: string };
    return res.status === 200 ? String(body.name) : `${res.status} ${String(body.code)}`;
  }

  it("a viewer's 1,001 sign-ins sign out no one else; they evict the viewer's own oldest sessions only", async () => {
    const operator = await signIn(served.tokens.operator);
    expect(await whoIs(operator)).toBe("olivia");

    const viewer: string[] = [];
    for (let i = 0; i < 1_001; i += 25) {
      const batch = await Promise.all(Array.from({ length: Math.min(25, 1_001 - i) }, () => signIn(served.tokens.viewer)));
      viewer.push(...batch);
    }
    expect(viewer).toHaveLength(1_001);

    expect(await whoIs(operator)).toBe("olivia");
    expect(await whoIs(viewer[viewer.length - 1] ?? "")).toBe("victor");
    expect(await whoIs(viewer[0] ?? "")).toBe("401 STEAD_TOKEN_REFUSED");
    // What one token may hold is small: most of the viewer's sessions are gone, the operator's stays.
    const live = (await Promise.all(viewer.map(whoIs))).filter((w) => w === "victor").length;
    expect(live).toBe(MAX_PER_TOKEN);
    expect(await whoIs(operator)).toBe("olivia");
  });
});

describe("browser sessions past the bound in all", () => {
  it("many tokens filling the server drop the oldest sessions of the largest holders, never a lone one", () => {
    const sessions = new BrowserSessions();
    const lone = sessions.open("token-lone");
    const crowd = Array.from({ length: Math.ceil(MAX_SESSIONS / MAX_PER_TOKEN) + 1 }, (_, i) => `token-${i}`);
    const firsts = crowd.map((t) => sessions.open(t).secret);
    for (const t of crowd) for (let n = 1; n < MAX_PER_TOKEN; n++) sessions.open(t);
    expect(sessions.token(lone.secret)).toBe("token-lone");
    const dropped = firsts.filter((secret) => sessions.token(secret) === undefined).length;
    expect(dropped).toBeGreaterThan(0);
  });
});
