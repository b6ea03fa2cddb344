/**
 * A malformed-input sweep of every route of the API's table, generated from ROUTES and each
 * route's own zod schemas, on both stores over real HTTP on 127.0.0.1: a path parameter past its
 * bound, a query or body field of a wrong type, a missing required field, an unknown field,
 * invalid JSON (never quoted back: it may hold a token), a body that is not an object, HEAD on a
 * stream (which must open none), a body past the size ceiling, an unknown id, and a
 * control command on a run that has ended. Each answer must be a 4xx problem with the right code
 * (naming the field where one is at fault), and the store must be exactly as it was afterwards (by
 * digest, no worker running). A route added later is swept without a line here; one whose
 * parameters or required fields have no sample below fails until it is given one.
 *
 * Refused requests are not audited: the one trace one leaves is its valid token's last-use mark
 * (at most once a minute), which the test sets before the digest is taken.
 *
 * The real run is parked on approval "ship" after step "prepare"; the real session has one turn
 * queued, which no worker runs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { workflow } from "../src/index.js";
import type { Route } from "../src/server/route-table.js";
import { ROUTES } from "../src/server/routes/index.js";
import { digestStore } from "../src/store/transfer/index.js";
import { STORE_KINDS } from "./helpers/both-stores.js";
import { servedStore, type Served } from "./helpers/served-store.js";

const parked = workflow("sweep-ship", { version: "1" }, async (ctx) => {
  await ctx.step("prepare", () => "prepared");
  return ctx.approval("ship", {});
});
const done = workflow("sweep-done", { version: "1" }, async (ctx) => ctx.step("only", () => 1));

/** Real values for each path parameter (the run is parked on approval "ship" after step "prepare"). */
const REAL_PARAMS: Record<string, (ids: { runId: string }) => string> = {
  runId: ({ runId }) => runId,
  wait: () => "ship",
  sessionId: () => "sweep-session",
  step: () => "prepare",
};
/** A value of each id parameter that names nothing. */
const UNKNOWN_PARAMS: Record<string, string> = { runId: "run_sweep_nothing", wait: "no-such-wait", sessionId: "no-such-session", step: "no-such-step" };
/** Valid bodies and queries, by route, where the route requires fields; a route absent takes `{}`. */
const VALID_BODY: Record<string, unknown> = {
  "POST /runs/:runId/waits/:wait/signal": { payload: 1 },
  "POST /runs/:runId/release": { choice: "retry" },
  "POST /runs": { definition: "no-such-definition", input: {} },
  "POST /sessions/:sessionId/messages": { text: "hello" },
};
const VALID_QUERY: Record<string, Record<string, string>> = {
  "GET /runs/:runId/snapshots/:step/file": { path: "a.txt" },
  "GET /runs/:runId/diff": { from: "start", to: "prepare" },
};
/** Values tried, in order, for a field; the first its schema refuses is sent. */
const WRONG_BODY_VALUES: readonly unknown[] = [12345, "not-this", true, [], {}, "x".repeat(20_000)];
// Past every bound, yet under Node's 16 KiB header ceiling (past it, Node answers 431 itself).
const WRONG_QUERY_VALUES: readonly string[] = ["not-a-number", "-1", "0", "zzz-not-an-option", "x".repeat(5_000)];
/** Forking is allowed on a run that has ended; every other control command is refused on one. */
const ALLOWED_ON_ENDED = new Set(["POST /runs/:runId/fork"]);

const label = (r: Route) => `${r.method} ${r.path}`;
const paramNames = (r: Route) => [...r.path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1] ?? "");
const jsonSchema = (s: z.ZodType | undefined) => (s ? (z.toJSONSchema(s, { io: "input", unrepresentable: "any" }) as { properties?: Record<string, unknown>; required?: string[] }) : {});

function pathOf(r: Route, values: Record<string, string>): string {
  return r.path.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    const v = values[name];
    if (v === undefined) throw new Error(`${label(r)}: give its parameter "${name}" a value in REAL_PARAMS and UNKNOWN_PARAMS`);
    return encodeURIComponent(v);
  });
}

interface Answer {
  status: number;
  type: string | null;
  problem: { code?: string; field?: string; status?: number; type?: string } | null;
}

describe.each(STORE_KINDS)("every route refuses malformed input on %s, changing nothing", (kind) => {
  let served: Served;
  let runId = "";
  let endedId = "";
  beforeAll(async () => {
    served = await servedStore(kind, "server-bad-input");
    runId = (await served.s.stead.run(parked, null, { followTimersMs: 0 })).id;
    endedId = (await served.s.stead.run(done, null, { followTimersMs: 0 })).id;
    // A session with one turn queued (no worker runs it).
    await served.s.stead.session(done, "sweep-session").send(null);
  });
  afterAll(async () => {
    await served.close();
  });

  const send = async (r: Route, o: { params?: Record<string, string>; query?: Record<string, string>; body?: unknown; raw?: string }): Promise<Answer> => {
    const real = Object.fromEntries(Object.entries(REAL_PARAMS).map(([k, f]) => [k, f({ runId })]));
    const query = new URLSearchParams(o.query ?? VALID_QUERY[label(r)] ?? {}).toString();
    const body = o.raw ?? (r.method === "POST" ? JSON.stringify(o.body ?? VALID_BODY[label(r)] ?? {}) : undefined);
    const abort = new AbortController();
    const res = await fetch(`${served.server.url}/api/v1${pathOf(r, { ...real, ...(o.params ?? {}) })}${query ? `?${query}` : ""}`, {
      method: r.method,
      signal: abort.signal,
      headers: { authorization: `Bearer ${served.tokens.operator}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      ...(body !== undefined ? { body } : {}),
    });
    const type = res.headers.get("content-type");
    // A stream that was accepted would never end: only its status is wanted.
    if (type?.startsWith("text/event-stream")) {
      abort.abort();
      return { status: res.status, type, problem: null };
    }
    const text = await res.text();
    return { status: res.status, type, problem: type === "application/problem+json" ? (JSON.parse(text) as Answer["problem"]) : null };
  };

  const refused = (what: string, a: Answer, status: number, code: string | RegExp, field?: string | RegExp) => {
    expect({ what, status: a.status, type: a.type }).toEqual({ what, status, type: "application/problem+json" });
    if (typeof code === "string") expect({ what, code: a.problem?.code }).toEqual({ what, code });
    else expect(a.problem?.code, what).toMatch(code);
    expect(a.problem, what).toMatchObject({ status, type: `urn:stead:error:${a.problem?.code}` });
    if (typeof field === "string") expect({ what, field: a.problem?.field }).toEqual({ what, field });
    else if (field) expect(a.problem?.field, what).toMatch(field);
  };

  it("a path parameter past its bound, a field of a wrong type, missing or unknown, bad JSON, a huge body, an unknown id, an ended run", async () => {
    for (const token of [served.tokens.operator, served.tokens.viewer]) expect((await fetch(`${served.server.url}/api/v1/runs`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    const before = await digestStore(served.s.stead.store);
    let cases = 0;
    for (const r of ROUTES) {
      const l = label(r);
      for (const name of paramNames(r)) {
        refused(`${l}: ${name} of 300 characters`, await send(r, { params: { [name]: "x".repeat(300) } }), 400, "STEAD_BAD_OPTION", `path.${name}`);
        const unknown = UNKNOWN_PARAMS[name];
        if (unknown === undefined) throw new Error(`${l}: give its parameter "${name}" an unknown value in UNKNOWN_PARAMS`);
        refused(`${l}: unknown ${name}`, await send(r, { params: { [name]: unknown } }), 404, /_NOT_FOUND$/);
        cases += 2;
      }
      const query = jsonSchema(r.query);
      for (const prop of Object.keys(query.properties ?? {})) {
        const valid = VALID_QUERY[l] ?? {};
        const wrong = WRONG_QUERY_VALUES.find((v) => !r.query?.safeParse({ ...valid, [prop]: v }).success);
        if (wrong === undefined) continue;
        refused(`${l}: query ${prop}=${wrong.slice(0, 20)}`, await send(r, { query: { ...valid, [prop]: wrong } }), 400, /^STEAD_BAD_(OPTION|POSITION)$/, new RegExp(`^query\\.${prop}`));
        cases++;
      }
      for (const prop of query.required ?? []) {
        const rest = { ...(VALID_QUERY[l] ?? {}) };
        delete rest[prop];
        refused(`${l}: query without ${prop}`, await send(r, { query: rest }), 400, "STEAD_BAD_OPTION", new RegExp(`^query\\.${prop}`));
        cases++;
      }
      if (r.kind === "stream") {
        // HEAD opens no stream: one that was opened for it would never be read or ended.
        const head = await fetch(`${served.server.url}/api/v1${pathOf(r, Object.fromEntries(Object.entries(REAL_PARAMS).map(([k, f]) => [k, f({ runId })])))}`, { method: "HEAD" });
        expect({ l, status: head.status }).toEqual({ l, status: 200 });
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect({ l, open: served.server.liveSubscribers() }).toEqual({ l, open: 0 });
        refused(`${l}: a position the store never gave`, await send(r, { query: { after: "not-a-position" } }), 400, "STEAD_BAD_POSITION");
        cases++;
      }
      if (r.method !== "POST") continue;
      const valid = (VALID_BODY[l] ?? {}) as Record<string, unknown>;
      const body = jsonSchema(r.body);
      for (const prop of Object.keys(body.properties ?? {})) {
        const wrong = WRONG_BODY_VALUES.find((v) => !r.body?.safeParse({ ...valid, [prop]: v }).success);
        if (wrong === undefined) continue;
        refused(`${l}: body ${prop} = ${JSON.stringify(wrong).slice(0, 20)}`, await send(r, { body: { ...valid, [prop]: wrong } }), 400, "STEAD_BAD_OPTION", new RegExp(`^body\\.${prop}`));
        cases++;
      }
      for (const prop of body.required ?? []) {
        const rest = { ...valid };
        delete rest[prop];
        refused(`${l}: body without ${prop}`, await send(r, { body: rest }), 400, "STEAD_BAD_OPTION", new RegExp(`^body\\.${prop}|^body$`));
        cases++;
      }
      refused(`${l}: an unknown field`, await send(r, { body: { ...valid, surprise: 1 } }), 400, "STEAD_BAD_OPTION", /^body/);
      const echoed = await send(r, { raw: '{"token": stead_NotQuotedBack' });
      refused(`${l}: invalid JSON`, echoed, 400, "STEAD_BAD_JSON", "body");
      expect(JSON.stringify(echoed.problem), `${l}: a bad body is not quoted back`).not.toContain("NotQuotedBack");
      refused(`${l}: an array, not an object`, await send(r, { raw: "[1,2]" }), 400, "STEAD_BAD_OPTION", /^body/);
      refused(`${l}: a body past the ceiling`, await send(r, { raw: JSON.stringify({ text: "x".repeat(65 * 1024) }) }), 413, "STEAD_PAYLOAD_TOO_LARGE");
      cases += 4;
      if (paramNames(r).includes("runId") && !ALLOWED_ON_ENDED.has(l)) {
        const a = await send(r, { params: { runId: endedId } });
        expect([404, 409], `${l} on an ended run answered ${a.status} ${a.problem?.code ?? ""}`).toContain(a.status);
        refused(`${l}: on an ended run`, a, a.status, /^STEAD_(INVALID_STATE|[A-Z_]+_NOT_FOUND)$/);
        cases++;
      }
    }
    expect(cases).toBeGreaterThan(100);
    expect(await digestStore(served.s.stead.store)).toEqual(before);
  });
});
