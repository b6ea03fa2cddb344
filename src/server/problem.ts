/**
 * Refusals as RFC 9457 problem details (`application/problem+json`): the status and title come
 * from ERROR_CODES, the body carries Stead's `code`, the ids involved and the fix. Only a
 * SteadError's own message and fields are shown; anything else is a 500 whose body says nothing
 * of the error (a stack or a driver message may hold secrets), logged by the server instead.
 */
import { ERROR_CODES, SteadError, type SteadErrorCode } from "../errors.js";

export const PROBLEM_TYPE = "application/problem+json";

export interface Problem {
  /** A URI naming the kind: one per error code. */
  type: string;
  title: string;
  status: number;
  detail: string;
  code: SteadErrorCode;
  fix?: string;
  runId?: string;
  stepId?: string;
  /** Request fields the refusal names (for a 400: the field that is wrong). */
  field?: string;
}

/** The detail fields a problem may repeat: ids and field names, never payloads. */
const SHOWN = new Set(["field", "wait", "hold", "session", "sessionId", "definition"]);

const TITLES: Partial<Record<number, string>> = {
  400: "Bad request",
  401: "Unauthenticated",
  403: "Forbidden",
  404: "Not found",
  405: "Method not allowed",
  409: "Conflict",
  413: "Payload too large",
  422: "Unprocessable content",
  429: "Too many requests",
  500: "Internal error",
  503: "Unavailable",
  504: "Timed out",
  507: "Store full",
};

export function statusOf(code: SteadErrorCode): number {
  return ERROR_CODES[code].http ?? 500;
}

/** The problem for `e`; `internal` says it was not a SteadError (the caller logs it). */
export function problemOf(e: unknown): { problem: Problem & Record<string, unknown>; internal: boolean } {
  if (!(e instanceof SteadError)) {
    return {
      internal: true,
      problem: { type: typeUri("STEAD_INTERNAL"), title: "Internal error", status: 500, detail: "the server failed to answer this request; its log has the error", code: "STEAD_INTERNAL" },
    };
  }
  const status = statusOf(e.code);
  const problem: Problem & Record<string, unknown> = { type: typeUri(e.code), title: TITLES[status] ?? "Error", status, detail: e.message, code: e.code };
  if (e.fix) problem.fix = e.fix;
  if (e.runId) problem.runId = e.runId;
  if (e.stepId) problem.stepId = e.stepId;
  for (const [k, v] of Object.entries(e.details)) if (SHOWN.has(k) && (typeof v === "string" || typeof v === "number")) problem[k] = v;
  return { internal: status >= 500, problem };
}

/** A URN per code (docs/errors.md lists them): stable, and no promise of a page at a host. */
const typeUri = (code: string): string => `urn:stead:error:${code}`;
