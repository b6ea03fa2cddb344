/**
 * A request body as the API reads it, over real HTTP on 127.0.0.1 with node's own client: sent
 * with a Content-Length, and chunked (no length up front, so the ceiling can only be enforced
 * while reading). What the body said is checked where it lands (the decision recorded in the
 * store), and a body refused changes nothing (the store's digest).
 */
import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { workflow } from "../src/index.js";
import { digestStore } from "../src/store/transfer/index.js";
import { servedStore, type Served } from "./helpers/served-store.js";

const flow = workflow("body-ship", { version: "1" }, async (ctx) => {
  await ctx.step("prepare", () => "prepared");
  return ctx.approval("ship", {});
});

/**
 * POSTs `parts` (Buffers, written one by one, 30 ms apart so the server reads them as separate
 * chunks); with `length`, a Content-Length header, else chunked.
 */
function post(served: Served, path: string, parts: readonly Buffer[], length: boolean): Promise<{ status: number; body: { code?: string } }> {
  const total = parts.reduce((n, p) => n + p.byteLength, 0);
  return new Promise((resolve, reject) => {
    const req = request(
      `${served.server.url}/api/v1${path}`,
      { method: "POST", headers: { authorization: `Bearer ${served.tokens.operator}`, "content-type": "application/json", ...(length ? { "content-length": total } : {}) } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text || "{}") as { code?: string } }));
      },
    );
    // Past the ceiling the server may answer and close before the body is all sent.
    req.on("error", (e: NodeJS.ErrnoException) => (e.code === "EPIPE" || e.code === "ECONNRESET" ? undefined : reject(e)));
    void (async () => {
      for (const [i, p] of parts.entries()) {
        if (i > 0) await new Promise((r) => setTimeout(r, 30));
        req.write(p);
      }
      req.end();
    })();
  });
}

async function parkedRun(served: Served): Promise<string> {
  const { id } = await served.s.stead.runs.start(flow, null);
  const w = served.s.stead.worker({ definitions: [flow], pollMs: 20 });
  await new Promise<void>((done) => {
    w.on("outcome", (_id, o) => o.kind === "waiting" && done());
    w.start();
  });
  await w.stop();
  return id;
}

/** The reason recorded with the approval, as the store holds it. */
async function recordedReason(served: Served, runId: string): Promise<unknown> {
  const wait = (await served.s.stead.store.waits(runId)).find((x) => x.name === "ship");
  return (JSON.parse(wait?.result ?? "null") as { reason?: unknown } | null)?.reason;
}

describe("request bodies", () => {
  let served: Served | undefined;
  afterEach(async () => {
    await served?.close();
    served = undefined;
  });

  // "é" and "✓" are two and three bytes: each part boundary below falls inside one of them.
  const reason = "déjà ✓ shipped";
  const text = Buffer.from(JSON.stringify({ reason }), "utf8");
  const cut = text.indexOf(Buffer.from("é")) + 1;
  const split = [text.subarray(0, cut), text.subarray(cut, text.indexOf(Buffer.from("✓")) + 2), text.subarray(text.indexOf(Buffer.from("✓")) + 2)];

  for (const length of [true, false]) {
    const how = length ? "with a Content-Length" : "chunked";

    it(`reads a body ${how}, written in parts split inside multi-byte characters`, async () => {
      served = await servedStore("sqlite", "body-parts");
      const id = await parkedRun(served);
      const r = await post(served, `/runs/${id}/waits/ship/approve`, split, length);
      expect(r.status).toBe(200);
      expect(await recordedReason(served, id)).toBe(reason);
    });

    it(`reads a body ${how} that starts with a UTF-8 byte order mark`, async () => {
      served = await servedStore("sqlite", "body-bom");
      const id = await parkedRun(served);
      const r = await post(served, `/runs/${id}/waits/ship/approve`, [Buffer.from([0xef, 0xbb, 0xbf]), text], length);
      expect(r.status).toBe(200);
      expect(await recordedReason(served, id)).toBe(reason);
    });

    it(`refuses a body ${how} past the ceiling with 413, changing nothing`, async () => {
      served = await servedStore("sqlite", "body-ceiling");
      const id = await parkedRun(served);
      const before = await digestStore(served.s.stead.store);
      const big = Buffer.from(JSON.stringify({ reason: "x".repeat(70 * 1024) }), "utf8");
      const r = await post(served, `/runs/${id}/waits/ship/approve`, [big.subarray(0, 1000), big.subarray(1000)], length);
      expect(r.status).toBe(413);
      expect(r.body.code).toBe("STEAD_PAYLOAD_TOO_LARGE");
      expect(await digestStore(served.s.stead.store)).toEqual(before);
    });
  }
});
