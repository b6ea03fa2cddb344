/**
 * A route of the HTTP API, declared once: the server registers it and the OpenAPI document
 * describes it from the same declaration, so the two cannot disagree. Params, query and body
 * are zod schemas; a request that fails one is refused 400 naming the field, before the handler
 * runs, so a refused request changes nothing.
 */
import type { z } from "zod";
import type { ApiRoutes } from "../client/api-types.js";
import type { Action } from "../engine/access/roles.js";
import type { Stead } from "../stead/stead.js";

export interface RouteInput<P, Q, B> {
  readonly stead: Stead;
  readonly params: P;
  readonly query: Q;
  readonly body: B;
  /** Who asks: the token's name (recorded as `by` with every decision), null when anonymous. */
  readonly actor: string | null;
  /** The request's `Idempotency-Key` header. */
  readonly idempotencyKey: string | undefined;
  /** Where a failure after a response began (a stream cut short) is logged; never given a token. */
  readonly logError: (line: string) => void;
}

type Method = "GET" | "POST";

/**
 * What a route's handler must answer: the shape client/api-types.ts declares for `METHOD /path`,
 * so a handler that drifts from what the client reads fails to compile; `unknown` for a route not
 * declared there (a stream, bytes), and for the table's erased `Route`.
 */
export type ResponseOf<M extends Method, Path extends string> = `${M} ${Path}` extends infer K ? (K extends keyof ApiRoutes ? ApiRoutes[K]["response"] : unknown) : never;

export interface Route<P = unknown, Q = unknown, B = unknown, M extends Method = Method, Path extends string = string, R = ResponseOf<M, Path>> {
  readonly method: M;
  /** Under /api/v1, Hono style: `/runs/:runId`. */
  readonly path: Path;
  /** One line for the OpenAPI document. */
  readonly summary: string;
  readonly tag: string;
  /** What the caller's role must permit (engine/access/roles.ts). */
  readonly action: Action;
  readonly params?: z.ZodType<P>;
  readonly query?: z.ZodType<Q>;
  readonly body?: z.ZodType<B>;
  /**
   * `stream`: a live SSE stream (`text/event-stream`, streams/) whose handler returns the
   * StreamSource it carries; it resumes after `Last-Event-ID`, or `?after=` on a first connect.
   */
  readonly kind?: "json" | "stream";
  /** Whether it takes an `Idempotency-Key` (every mutating route does). */
  readonly idempotent?: boolean;
  /** The media type of a 200 that is not JSON (the handler then returns a `Response`). */
  readonly produces?: string;
  /** The result as JSON, or, for a route that `produces` another type, the `Response` to send. */
  handle(input: RouteInput<P, Q, B>): Promise<R>;
}

/**
 * Checks a route's parameter types, and its answer (`R`) against ApiRoutes, then lets the table
 * hold routes of many shapes; the result keeps the method, path and answer for
 * test/api-types.test.ts, which holds the answer equal to what the client declares.
 */
export const route = <P, Q, B, M extends Method, Path extends string, R extends ResponseOf<M, Path>>(r: Route<P, Q, B, M, Path, R>): Route<unknown, unknown, unknown, M, Path, R> => r;
