/**
 * Issue 39, item 18: a request whose path the server serves with other methods is answered 405
 * with an `Allow` header naming them (a problem with code STEAD_METHOD_NOT_ALLOWED), not 404 as
 * if the path did not exist; a path no route has stays 404. Over real HTTP on 127.0.0.1, on both
 * stores, for API routes, sign-in, the probes, the console's pages and /mcp; with a token and
 * without; nothing is written (the store's digest is unchanged, the run is still there).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workflow, type Worker } from "../../src/index.js";
import { digestStore } from "../../src/store/transfer/index.js";
import { STORE_KINDS } from "../helpers/both-stores.js";
import { servedStore, type Served } from "../helpers/served-store.js";
import { waitUntil } from "../helpers/waiting.js";

const parked = workflow("allow-ship", async (ctx) => {
  await ctx.step("prepare", () => "prepared");
  return ctx.approval("ship", {});
});

describe.each(STORE_KINDS)("a method a path does not take, over HTTP on %s", (kind) => {
  let served: Served;
  let worker: Worker;
  let runId = "";

  beforeAll(async () => {
    served = await servedStore(kind, "api-405");
    worker = served.s.stead.worker({ definitions: [parked], pollMs: 20, graceMs: 500, leaseMs: 3_000 });
    worker.on("error", () => undefined);
    worker.start();
    runId = (await served.s.stead.runs.start(parked, null)).id;
    await waitUntil("the run to park", async () => (await served.s.stead.runs.get(runId)).status === "waiting");
    await worker.stop();
  });
  afterAll(async () => {
    await served.close();
  });

  const send = async (method: string, path: string, token?: string) => {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (token) headers.authorization = `Bearer ${token}`;
    const res = await fetch(`${served.server.url}${path}`, { method, headers, ...(method === "GET" || method === "HEAD" ? {} : { body: "{}" }) });
    const text = await res.text();
    return { status: res.status, allow: res.headers.get("allow"), type: res.headers.get("content-type"), body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>) };
  };

  it("is 405 with the methods the path takes in Allow; a path nothing serves is 404; nothing is written", async () => {
    // A token's last use is marked at most once a minute: mark it now, so the digest shows any other write.
    expect((await send("GET", `/api/v1/runs/${runId}`, served.tokens.operator)).status).toBe(200);
    const before = await digestStore(served.s.stead.store);
    const run = `/api/v1/runs/${runId}`;
    const cases: [string, string, string][] = [
      ["PUT", run, "GET, HEAD"],
      ["DELETE", run, "GET, HEAD"],
      ["PATCH", run, "GET, HEAD"],
      ["DELETE", "/api/v1/runs", "GET, HEAD, POST"],
      ["PUT", `${run}/cancel`, "POST"],
      ["GET", `${run}/cancel`, "POST"],
      ["DELETE", `${run}/waits/ship/approve`, "POST"],
      ["GET", `${run}/waits/ship/approve`, "POST"],
      ["PUT", "/api/v1/auth/session", "POST"],
      ["DELETE", "/healthz", "GET, HEAD"],
      ["POST", "/readyz", "GET, HEAD"],
      ["POST", "/api/v1/openapi.json", "GET, HEAD"],
      ["PUT", "/mcp", "POST"],
    ];
    for (const token of [served.tokens.operator, undefined]) {
      for (const [method, path, allow] of cases) {
        const r = await send(method, path, token);
        const label = `${method} ${path}${token ? " (operator)" : ""}`;
        expect({ label, status: r.status, allow: r.allow, type: r.type }).toEqual({ label, status: 405, allow, type: "application/problem+json" });
        expect(r.body, label).toMatchObject({ status: 405, code: "STEAD_METHOD_NOT_ALLOWED", type: "urn:stead:error:STEAD_METHOD_NOT_ALLOWED", title: "Method not allowed" });
        expect(String(r.body.fix), label).toContain(allow.split(", ")[0]);
      }
    }
    for (const [method, path] of [
      ["DELETE", "/api/v1/nothing-here"],
      ["GET", "/api/v1/nothing-here"],
      ["PUT", `${run}/no-such-verb`],
    ] as const) {
      const r = await send(method, path, served.tokens.operator);
      expect({ path, status: r.status, allow: r.allow, code: r.body.code }).toEqual({ path, status: 404, allow: null, code: "STEAD_NO_ROUTE" });
    }
    // /mcp refuses GET and DELETE itself (no stream is offered), saying POST.
    expect(await send("GET", "/mcp", served.tokens.operator)).toMatchObject({ status: 405, allow: "POST" });
    expect(await digestStore(served.s.stead.store)).toEqual(before);
    expect((await served.s.stead.runs.get(runId)).status).toBe("waiting");
  });
});
