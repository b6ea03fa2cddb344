/**
 * The HTTP API as a Hono app: every route of ROUTES under /api/v1, the MCP server at /mcp, plus
 * /healthz, /readyz and the OpenAPI document. Order of a request's checks, each refusing before
 * anything is read or written: Host and Origin (no DNS rebinding, no cross-site requests), body
 * size, token (the bearer header, else the browser-session cookie, whose POSTs must carry an
 * Origin), role, then params, query and body against the route's schemas; only then the
 * handler. /mcp takes the same first checks, then refuses a request with no token unless reads
 * are served anonymously; each tool call then checks the role for its own action (mcp/). A path
 * served with other methods than the request's is 405 with `Allow`; only a path no route has is 404.
 */
import { Hono, type Context } from "hono";
import type { z } from "zod";
import type { ApiResponse } from "../client/api-types.js";
import { SteadError } from "../errors.js";
import type { Stead } from "../stead/stead.js";
import { allowedMethods } from "./allowed-methods.js";
import { actionsFor, requireAccess, type Authenticate } from "./auth.js";
import { AUTH_ME_PATH, registerBrowserAuth } from "./browser-auth.js";
import { BrowserSessions, sessionCookieName } from "./browser-sessions.js";
import { CONSOLE_PATHS, loadConsole, type ConsoleAssets } from "./console-assets.js";
import { tokenCaller } from "./mcp/caller.js";
import { Metrics } from "./metrics.js";
import { openApiDocument } from "./openapi.js";
import { PROBLEM_TYPE, problemOf } from "./problem.js";
import type { Route } from "./route-table.js";
import { ROUTES } from "./routes/index.js";
import { bodyCeiling, bodyText } from "./request-body.js";
import { identify, type Identified, type Identify } from "./principal.js";
import { signInPage } from "./sign-in-page.js";
import { BadTokenSlowdown } from "./slowdown.js";
import { StreamHub } from "./streams/hub.js";
import { streamResponse } from "./streams/response.js";
import type { StreamSource } from "./streams/subscriber.js";

export const API_PREFIX = "/api/v1";
export const MCP_PATH = "/mcp";
/** The MCP SDK takes a third of a second to load: loaded at the first /mcp request, not by every `stead` command. */
const mcpHttp = (() => {
  let loading: Promise<typeof import("./mcp/http.js")> | undefined;
  return () => (loading ??= import("./mcp/http.js"));
})();
/** Default ceiling of a request body. Stored payloads have their own (payloadLimitBytes). */
export const DEFAULT_MAX_BODY_BYTES = 2 * 1024 * 1024;

export interface ApiOptions {
  readonly stead: Stead;
  readonly authenticate: Authenticate;
  /** Serve reads without a token (loopback only: `stead serve` never sets it on another address). */
  readonly anonymousReads: boolean;
  /** Host header values served, lower case, with port (`127.0.0.1:8080`). */
  readonly hosts: readonly string[];
  /**
   * The exact origins served (`http://127.0.0.1:8080`, scheme included): a request whose Origin is
   * another is refused. Default: `http://` and each of `hosts` (a server without TLS).
   */
  readonly origins?: readonly string[];
  /** The port listened on: it names the browser-session cookie (`sessionCookieName`). */
  readonly cookiePort?: number;
  readonly maxBodyBytes?: number;
  /** Where the server logs a failure that is not the request's (never given a token). */
  readonly logError?: (line: string) => void;
  /** The live event streams (default: a hub of this app's own, never closed). */
  readonly streams?: StreamHub;
  /** The caller's address, for slowing down repeated bad tokens. */
  readonly remoteAddress?: (c: Context) => string;
  /** What `/metrics` serves; default: the store's counts alone (give one that observes this process's workers). */
  readonly metrics?: Metrics;
  /** Where repeated bad tokens are counted per address (default: one of this app's own). */
  readonly slowdown?: BadTokenSlowdown;
  /** Whether the browser reached the server over https (its session cookie is then Secure). */
  readonly secureRequest?: (c: Context) => boolean;
  /** The one-time login token's name (`stead serve`'s printed URL): exchanged once, never a bearer token. */
  readonly loginTokenName?: string;
  /** The web console (default: the built one, when there is one); false serves none. */
  readonly console?: ConsoleAssets | false;
}

export function createApi(options: ApiOptions): Hono {
  const app = new Hono();
  const hosts = new Set(options.hosts.map((h) => h.toLowerCase()));
  // Scheme included: a page served over the other scheme on the same host and port is another origin.
  const origins = new Set((options.origins ?? [...hosts].map((h) => `http://${h}`)).map((o) => o.toLowerCase()));
  const slowdown = options.slowdown ?? new BadTokenSlowdown();
  const address = options.remoteAddress ?? (() => "unknown");
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const streams = options.streams ?? new StreamHub(options.stead, options.logError ? { logError: options.logError } : {});
  const ids: Identify = { authenticate: options.authenticate, slowdown, sessions: new BrowserSessions(undefined, sessionCookieName(options.cookiePort)), loginTokenName: options.loginTokenName };
  const principal = async (c: Context) => {
    const found = await identify(c, ids, address(c));
    requireOriginForCookie(c, found);
    return found.who;
  };

  app.onError((e, c) => problem(c, e, options.logError));
  // Read when the first request finds no route: every route is registered by then.
  let allow: ((path: string) => string[]) | undefined;
  app.notFound((c) => {
    const path = new URL(c.req.url).pathname;
    allow ??= allowedMethods(app.routes.filter((r) => r.handler !== refuseMcpMethod));
    const methods = allow(path);
    if (methods.length === 0) return problem(c, new SteadError("STEAD_NO_ROUTE", `no route ${c.req.method} ${path}`, { fix: `see GET ${API_PREFIX}/openapi.json` }));
    const refused = problem(c, new SteadError("STEAD_METHOD_NOT_ALLOWED", `${path} does not take ${c.req.method.slice(0, 20)}: it takes ${methods.join(", ")}`, { fix: `send ${methods.join(" or ")} (see GET ${API_PREFIX}/openapi.json)` }));
    refused.headers.set("Allow", methods.join(", "));
    return refused;
  });

  app.use("*", async (c, next) => {
    const host = (c.req.header("host") ?? "").toLowerCase();
    if (!hosts.has(host)) throw new SteadError("STEAD_ORIGIN_REFUSED", `this server does not serve host ${JSON.stringify(host.slice(0, 100))}`, { fix: `call it as ${[...hosts][0] ?? "its listen address"}, or start it with --host for that name` });
    const origin = c.req.header("origin");
    if (origin !== undefined && !origins.has(origin.toLowerCase())) throw new SteadError("STEAD_ORIGIN_REFUSED", "cross-origin requests are refused", { fix: "call the API from the server's own origin" });
    await next();
    answerHeaders(c);
  });
  app.use(
    "*",
    bodyCeiling(maxBody, (c) => problem(c, new SteadError("STEAD_PAYLOAD_TOO_LARGE", `the request body is over ${maxBody} bytes`, { fix: "send a smaller body" }))),
  );

  app.get("/healthz", (c) => c.json({ ok: true }));
  app.get("/readyz", async (c) => {
    try {
      const info = await options.stead.admin.readiness();
      return c.json({ ok: true, dialect: info.dialect, schemaVersion: info.schemaVersion });
    } catch (e) {
      return problem(c, e, options.logError);
    }
  });
  app.get(`${API_PREFIX}/openapi.json`, (c) => c.json(openApiDocument(ROUTES)));
  const metrics = options.metrics ?? new Metrics({ stead: options.stead });
  metrics.setStreamSubscribers(() => streams.subscribers);
  app.get("/metrics", async (c) => {
    requireAccess(await principal(c), "metrics.read", options.anonymousReads);
    return c.body(await metrics.text(), 200, { "Content-Type": metrics.contentType });
  });
  // The console when it is built; else the plain sign-in page (it exchanges the URL's token too).
  const consoleApp = options.console === undefined ? loadConsole() : options.console === false ? undefined : options.console;
  if (consoleApp) {
    for (const path of CONSOLE_PATHS) app.get(path, () => consoleApp.page());
    app.get("/assets/:name", (c) => consoleApp.asset(c.req.param("name")) ?? problem(c, new SteadError("STEAD_NO_ROUTE", "no such console asset", { fix: "reload the console: the server may have been upgraded" })));
  } else app.get("/", () => signInPage());
  // Who the caller is and what it may do: the console shows no button for what it may not (the routes refuse it anyway).
  app.get(`${API_PREFIX}${AUTH_ME_PATH}`, async (c) => {
    const who = await principal(c);
    if (who === undefined && !options.anonymousReads) requireAccess(who, "runs.read", false);
    return c.json({ name: who?.name ?? null, role: who?.role ?? null, actions: actionsFor(who, options.anonymousReads) } satisfies ApiResponse<"GET /auth/me">);
  });
  registerBrowserAuth(app, { ...ids, prefix: API_PREFIX, address, secure: options.secureRequest ?? (() => false), body: jsonBody });

  app.post(MCP_PATH, async (c) => {
    const who = await principal(c);
    if (who === undefined && !options.anonymousReads) requireAccess(who, "runs.read", false);
    const { mcpResponse } = await mcpHttp();
    return mcpResponse(c.req.raw, { stead: options.stead, caller: tokenCaller(who, options.anonymousReads), maxBodyBytes: maxBody, ...(options.logError ? { logError: options.logError } : {}) });
  });
  app.on(["GET", "DELETE"], MCP_PATH, refuseMcpMethod);

  for (const r of ROUTES) {
    const handler = async (c: Context) => {
      const who = await principal(c);
      requireAccess(who, r.action, options.anonymousReads);
      const input = {
        stead: options.stead,
        params: parse(r.params, c.req.param(), "path"),
        query: parse(r.query, c.req.query(), "query"),
        body: r.method === "POST" ? parse(r.body, await jsonBody(c), "body") : undefined,
        actor: who?.name ?? null,
        idempotencyKey: r.idempotent ? c.req.header("idempotency-key") : undefined,
        logError: options.logError ?? (() => undefined),
      };
      const result = await r.handle(input);
      // Hono answers HEAD with the GET handler and drops the body uncancelled: a stream opened for it would never end.
      if (r.kind === "stream" && c.req.method === "HEAD") return c.body(null, 200, { "Content-Type": "text/event-stream; charset=utf-8" });
      if (r.kind === "stream") return streamResponse(streams, result as StreamSource, c.req.header("last-event-id") ?? (input.query as { after?: string } | undefined)?.after ?? null);
      // This process wrote: a stream carrying what it wrote need not wait for the next poll.
      if (r.method === "POST") streams.wake();
      if (result instanceof Response) return result;
      if (isReplay(result)) c.header("Idempotent-Replayed", result.already ? "true" : "false");
      return c.json(result as object);
    };
    if (r.method === "GET") app.get(API_PREFIX + r.path, handler);
    else app.post(API_PREFIX + r.path, handler);
  }
  return app;
}

/** /mcp's own 405 to GET and DELETE (JSON-RPC shaped): registered as a route, yet not a method /mcp takes. */
const refuseMcpMethod = async (): Promise<Response> => (await mcpHttp()).mcpMethodNotAllowed();

/**
 * No caching unless the answer set its own, and no content sniffing, on every answer. Set on the
 * response's own headers: `c.header()` on a finished response copies it whole, which makes
 * node-server build a full WHATWG Response for each request. Hazard: a Response from elsewhere
 * (fetch, Response.error) has immutable headers; that one alone is copied, through `c.header()`.
 */
function answerHeaders(c: Pick<Context, "res" | "header">): void {
  const set = (name: string, value: string, onlyIfAbsent: boolean) => {
    if (onlyIfAbsent && c.res.headers.has(name)) return;
    try {
      c.res.headers.set(name, value);
    } catch {
      c.header(name, value);
    }
  };
  set("Cache-Control", "no-store", true);
  set("X-Content-Type-Options", "nosniff", false);
}

function problem(c: Context, e: unknown, logError?: (line: string) => void): Response {
  const { problem: p, internal } = problemOf(e);
  if (internal && logError) logError(`${c.req.method} ${new URL(c.req.url).pathname}: ${e instanceof Error ? `${e.name}: ${e.message}` : "a non-error was thrown"}`);
  const headers: Record<string, string> = { "Content-Type": PROBLEM_TYPE, "Cache-Control": "no-store" };
  const retryAfterS = e instanceof SteadError ? e.details.retryAfterS : undefined;
  if (typeof retryAfterS === "number") headers["Retry-After"] = String(retryAfterS);
  return new Response(JSON.stringify(p), { status: p.status, headers });
}

/**
 * A browser sends its session cookie with every request to this origin: a mutating request the
 * cookie authenticates must also say where it came from (Origin, checked against the served
 * names above), so a request a browser was tricked into sending without one changes nothing.
 */
function requireOriginForCookie(c: Context, found: Identified): void {
  if (found.via === "cookie" && c.req.method !== "GET" && c.req.method !== "HEAD" && c.req.header("origin") === undefined) {
    throw new SteadError("STEAD_ORIGIN_REFUSED", "a request signed in by the browser-session cookie must carry an Origin header", { fix: "send it from the server's own pages, or use `Authorization: Bearer <token>`" });
  }
}

async function jsonBody(c: Context): Promise<unknown> {
  const text = await bodyText(c);
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    // The parser's message quotes the body, which may hold a token: only the place is told.
    const at = /position (\d+)/.exec((e as Error).message)?.[1];
    throw new SteadError("STEAD_BAD_JSON", `the request body is not valid JSON${at === undefined ? "" : ` (at character ${at})`}`, { fix: "send a JSON object", field: "body" });
  }
}

/** `value` as `schema` says, or STEAD_BAD_OPTION naming the first field that is wrong. */
function parse<T>(schema: z.ZodType<T> | undefined, value: unknown, where: "path" | "query" | "body"): T {
  if (schema === undefined) return undefined as T;
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const field = [where, ...(issue?.path ?? []).map(String)].join(".");
  throw new SteadError("STEAD_BAD_OPTION", `${field}: ${issue?.message ?? "invalid"}`, { fix: `correct ${field} (see GET ${API_PREFIX}/openapi.json)`, field });
}

const isReplay = (x: unknown): x is { already: boolean } => typeof x === "object" && x !== null && typeof (x as { already?: unknown }).already === "boolean";

export type { Route };
