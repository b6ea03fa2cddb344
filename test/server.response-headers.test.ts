/**
 * Every answer the API gives carries `X-Content-Type-Options: nosniff`, and one that does not set
 * its own caching says `Cache-Control: no-store`: JSON replies, problems (from a handler, from the
 * error handler, for no route), the sign-in page, the OpenAPI document, a Response a handler built
 * itself (the MCP method refusal), and an event stream. Read off real HTTP responses on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { servedStore, type Served } from "./helpers/served-store.js";

describe("response headers", () => {
  let served: Served;
  beforeAll(async () => {
    served = await servedStore("sqlite", "headers");
  });
  afterAll(() => served.close());

  const cases: [string, string, string, RequestInit?][] = [
    ["a JSON reply", "GET", "/api/v1/runs"],
    ["a health check", "GET", "/healthz"],
    ["the OpenAPI document", "GET", "/api/v1/openapi.json"],
    ["a problem from a handler", "GET", "/api/v1/runs/run_none"],
    ["a problem for a bad body", "POST", "/api/v1/runs", { body: "{not json" }],
    ["no route", "GET", "/api/v1/nothing-here"],
    ["a refused token", "GET", "/api/v1/runs", { headers: { authorization: "Bearer stead_nope" } }],
    ["a Response the handler built", "GET", "/mcp"],
    ["the sign-in page", "GET", "/"],
  ];

  for (const [what, method, path, init] of cases) {
    it(`${what}: nosniff, and no-store unless it sets its own caching`, async () => {
      const res = await fetch(`${served.server.url}${path}`, {
        method,
        ...init,
        headers: { authorization: `Bearer ${served.tokens.operator}`, "content-type": "application/json", ...(init?.headers as Record<string, string> | undefined) },
      });
      await res.arrayBuffer();
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("cache-control")).toMatch(/no-store|max-age|no-cache/);
      if (path.startsWith("/api/") || path === "/healthz") expect(res.headers.get("cache-control")).toBe("no-store");
    });
  }

  it("an event stream: nosniff and no-store on its first bytes", async () => {
    const ac = new AbortController();
    const res = await fetch(`${served.server.url}/api/v1/events/stream`, { headers: { authorization: `Bearer ${served.tokens.operator}` }, signal: ac.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("cache-control")).toContain("no-store");
    ac.abort();
  });
});
