/**
 * The typed client of a Stead server's HTTP API (`/api/v1`): `createClient({ url, token })`.
 * Every method is one request; a refusal throws SteadClientError with the problem's code, status
 * and fix. Control commands take an optional `idempotencyKey`: a retry with the same key returns
 * the first result (`already: true`) and changes nothing.
 *
 * Invariant: the token only ever travels in the Authorization header, never in a URL.
 */
import { refusal, SteadClientError } from "./errors.js";
import { streamEvents, type StreamOptions } from "./events.js";
import type { ApiResponse, CancelBody, DecisionBody, DenialBody, ForkBody, ListedRunView, ReleaseBody, Replayed, ResumeBody, RunDetail, RunDetailWithoutJournal, RunFilter, RunStatus, StartBody, WaitKind } from "./api-types.js";
import type { StreamedEvent } from "./types.js";

export interface ClientOptions {
  /** The server's base URL (`http://127.0.0.1:7420`); `/api/v1` is added. */
  url: string;
  /** A bearer token (`stead tokens create`); absent: anonymous reads, which only a loopback server serves. */
  token?: string;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
}

export interface Keyed {
  idempotencyKey?: string;
}

export type Events = AsyncIterable<StreamedEvent>;

/** Every method answers its route's shape as api-types.ts declares it (`ApiResponse<"GET /runs">` is `GET /runs`'s). */
export interface SteadClient {
  runs: {
    /** One page of runs (`GET /runs`); pass the page's `nextCursor` as `cursor` for the next. */
    list(filter?: RunFilter): Promise<ApiResponse<"GET /runs">>;
    /** Every run the filter matches, page by page (the filter's `limit` is the page size). */
    all(filter?: Omit<RunFilter, "cursor">): AsyncIterable<ListedRunView>;
    /** One run in full; `{ journal: false }` leaves its journal out (`journalLength` instead): page it with `journal`. */
    get(runId: string, options?: { journal?: true }): Promise<RunDetail>;
    get(runId: string, options: { journal: false }): Promise<RunDetailWithoutJournal>;
    /** A page of the run's journal in journal order (`GET /runs/:id/journal`): `offset` from 0, `limit` 1 to 1000 (default 200); or `step`: the page that holds it. */
    journal(runId: string, options?: { offset?: number; limit?: number; step?: string }): Promise<ApiResponse<"GET /runs/:runId/journal">>;
    /** Starts a run of a definition the server knows, by name (`POST /runs`). */
    start(definition: string, input: unknown, options?: Keyed & Pick<StartBody, "id">): Promise<ApiResponse<"POST /runs">>;
    approve(runId: string, wait: string, options?: Keyed & DecisionBody): Promise<ApiResponse<"POST /runs/:runId/waits/:wait/approve">>;
    deny(runId: string, wait: string, options?: Keyed & DenialBody): Promise<ApiResponse<"POST /runs/:runId/waits/:wait/deny">>;
    signal(runId: string, wait: string, payload: unknown, options?: Keyed): Promise<ApiResponse<"POST /runs/:runId/waits/:wait/signal">>;
    release(runId: string, options: Keyed & ReleaseBody): Promise<ApiResponse<"POST /runs/:runId/release">>;
    pause(runId: string, options?: Keyed): Promise<ApiResponse<"POST /runs/:runId/pause">>;
    resume(runId: string, options?: Keyed & ResumeBody): Promise<ApiResponse<"POST /runs/:runId/resume">>;
    cancel(runId: string, options?: Keyed & CancelBody): Promise<ApiResponse<"POST /runs/:runId/cancel">>;
    retry(runId: string, options?: Keyed): Promise<ApiResponse<"POST /runs/:runId/retry">>;
    fork(runId: string, options?: Keyed & ForkBody): Promise<ApiResponse<"POST /runs/:runId/fork">>;
    /** Events after a number, one page (`GET /runs/:id/events`). */
    eventPage(runId: string, options?: { after?: number; limit?: number }): Promise<ApiResponse<"GET /runs/:runId/events">>;
    /** The run's events, live: every one once, in order, across reconnects. */
    events(runId: string, options?: StreamOptions): Events;
  };
  sessions: {
    list(): Promise<ApiResponse<"GET /sessions">>;
    /** One session with its turns (`GET /sessions/:id`). */
    get(sessionId: string): Promise<ApiResponse<"GET /sessions/:sessionId">>;
    transcript(sessionId: string): Promise<ApiResponse<"GET /sessions/:sessionId/transcript">>;
    /** Sends a message as the session's next turn (`POST /sessions/:id/messages`), under the agent its last turn recorded. */
    send(sessionId: string, text: string, options?: Keyed): Promise<ApiResponse<"POST /sessions/:sessionId/messages">>;
    /** The session's events (every turn's), live. */
    events(sessionId: string, options?: StreamOptions): Events;
  };
  /** What workers announced they serve (`GET /definitions`), and the live workers (`GET /workers`). */
  definitions: {
    list(options?: { name?: string }): Promise<ApiResponse<"GET /definitions">>;
    workers(): Promise<ApiResponse<"GET /workers">>;
  };
  /** Open waits across runs, newest first (`GET /waits`): the approvals inbox with `{ kind: "approval" }`. */
  waits: {
    list(options?: { kind?: WaitKind; limit?: number }): Promise<ApiResponse<"GET /waits">>;
  };
  /** Holds, open ones unless `open` is false (`GET /holds`); of one run with `runId`. */
  holds: {
    list(options?: { runId?: string; open?: boolean }): Promise<ApiResponse<"GET /holds">>;
  };
  /** Who the caller is and every action its role may take (`GET /auth/me`). */
  me(): Promise<ApiResponse<"GET /auth/me">>;
  /** Runs by status, open waits and holds by kind (`GET /tally`). */
  tally(): Promise<ApiResponse<"GET /tally">>;
  /** Every run's events, live. */
  events(options?: StreamOptions): Events;
}

const seg = (s: string): string => encodeURIComponent(s);

/** `o` without its undefined fields and without the key (it travels as a header). */
function bodyOf(o: { [field: string]: unknown } | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o ?? {})) if (v !== undefined && k !== "idempotencyKey") out[k] = v;
  return out;
}

export function createClient(options: ClientOptions): SteadClient {
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  const base = `${options.url.replace(/\/+$/, "")}/api/v1`;
  if (options.token !== undefined && !/^[A-Za-z0-9._~+/=-]{1,512}$/.test(options.token)) {
    throw new SteadClientError("STEAD_TOKEN_REFUSED", 0, "the token is not one a Stead server gives", "pass the token `stead tokens create` printed, unchanged");
  }
  const auth: Record<string, string> = options.token === undefined ? {} : { authorization: `Bearer ${options.token}` };

  async function call<T>(method: "GET" | "POST", path: string, init: { body?: unknown; key?: string | undefined; query?: Record<string, string | undefined> } = {}): Promise<T> {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(init.query ?? {})) if (v !== undefined) q.set(k, v);
    const headers: Record<string, string> = { ...auth, accept: "application/json" };
    if (method === "POST") headers["content-type"] = "application/json";
    if (init.key !== undefined) headers["idempotency-key"] = init.key;
    let res: Response;
    try {
      res = await doFetch(`${base}${path}${q.size > 0 ? `?${q.toString()}` : ""}`, { method, headers, ...(method === "POST" ? { body: JSON.stringify(init.body ?? {}) } : {}) });
    } catch (e) {
      throw new SteadClientError("STEAD_CLIENT_NETWORK", 0, `no answer from ${options.url}: ${e instanceof Error ? e.message : String(e)}`, "check the server runs and the url", {}, { cause: e });
    }
    if (!res.ok) throw await refusal(res);
    try {
      return (await res.json()) as T;
    } catch (e) {
      throw new SteadClientError("STEAD_CLIENT_BAD_RESPONSE", res.status, "the answer is not JSON", "check the client's url points at a Stead server", {}, { cause: e });
    }
  }

  const post = <T = Replayed>(path: string, o?: Keyed & { [field: string]: unknown }) => call<T>("POST", path, { body: bodyOf(o), key: o?.idempotencyKey });
  const stream = (path: string, o?: StreamOptions, startsNow = false): Events => ({
    [Symbol.asyncIterator]: () => streamEvents({ url: `${base}${path}`, headers: auth, fetch: doFetch, ...(startsNow ? { positionUrl: `${base}/events/position` } : {}) }, o),
  });
  const run = (id: string) => `/runs/${seg(id)}`;

  return {
    runs: {
      list: (f = {}) => call("GET", "/runs", { query: listingQuery(f) }),
      all: (f = {}) => ({
        async *[Symbol.asyncIterator]() {
          for (let cursor: string | undefined; ; ) {
            const page = await call<ApiResponse<"GET /runs">>("GET", "/runs", { query: listingQuery({ ...f, ...(cursor === undefined ? {} : { cursor }) }) });
            yield* page.runs;
            if (page.nextCursor === null) return;
            cursor = page.nextCursor;
          }
        },
      }),
      get: (id: string, o: { journal?: boolean } = {}) => call<never>("GET", run(id), { query: { journal: o.journal === false ? "false" : undefined } }),
      journal: (id, o = {}) => call("GET", `${run(id)}/journal`, { query: { offset: o.offset?.toString(), limit: o.limit?.toString(), step: o.step } }),
      start: (definition, input, o = {}) => post("/runs", { ...o, definition, input }),
      approve: (id, wait, o) => post(`${run(id)}/waits/${seg(wait)}/approve`, { ...o }),
      deny: (id, wait, o) => post(`${run(id)}/waits/${seg(wait)}/deny`, { ...o }),
      signal: (id, wait, payload, o = {}) => post(`${run(id)}/waits/${seg(wait)}/signal`, { ...o, payload }),
      release: (id, o) => post(`${run(id)}/release`, { ...o }),
      pause: (id, o) => post(`${run(id)}/pause`, { ...o }),
      resume: (id, o) => post(`${run(id)}/resume`, { ...o }),
      cancel: (id, o) => post(`${run(id)}/cancel`, { ...o }),
      retry: (id, o) => post(`${run(id)}/retry`, { ...o }),
      fork: (id, o) => post(`${run(id)}/fork`, { ...o }),
      eventPage: (id, o = {}) => call("GET", `${run(id)}/events`, { query: { after: o.after?.toString(), limit: o.limit?.toString() } }),
      events: (id, o) => stream(`${run(id)}/stream`, o),
    },
    sessions: {
      list: () => call("GET", "/sessions"),
      get: (id) => call("GET", `/sessions/${seg(id)}`),
      transcript: (id) => call("GET", `/sessions/${seg(id)}/transcript`),
      send: (id, text, o = {}) => post(`/sessions/${seg(id)}/messages`, { ...o, text }),
      events: (id, o) => stream(`/sessions/${seg(id)}/stream`, o),
    },
    definitions: {
      list: (o = {}) => call("GET", "/definitions", { query: { name: o.name } }),
      workers: () => call("GET", "/workers"),
    },
    waits: {
      list: (o = {}) => call("GET", "/waits", { query: { kind: o.kind, limit: o.limit?.toString() } }),
    },
    holds: {
      list: (o = {}) => call("GET", "/holds", { query: { runId: o.runId, open: o.open === undefined ? undefined : String(o.open) } }),
    },
    me: () => call("GET", "/auth/me"),
    tally: () => call("GET", "/tally"),
    // Given no position it starts "now": the client asks where that is first, so a reconnect misses nothing.
    events: (o) => stream("/events/stream", o, true),
  };
}

function listingQuery(f: RunFilter): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(f) as [string, string | number | RunStatus[] | undefined][]) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? v.join(",") : String(v);
  }
  return out;
}
