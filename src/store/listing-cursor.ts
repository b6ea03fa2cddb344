/**
 * A run listing's query, checked before any SQL is built, and its cursor.
 *
 * Pagination is by keyset: a page is the first `limit` runs after the cursor's position in the
 * order (sort key, id), never an OFFSET. The cursor carries that position (the last run's key and
 * id), the sort and order, and a digest of the filters, so it continues only the listing it came
 * from: another sort, order or filter with it is refused rather than silently giving another list.
 *
 * What a walk over pages sees while runs change (the order is by (key, id), so a fixed key gives
 * every run one place in it):
 * - by `createdAt` (a run's never changes): each run appears at most once; runs created during the
 *   walk appear only if their place is still ahead (with `desc`, newest first, they are behind).
 * - by `updatedAt`, a run whose row changes between two pages moves to the newest end. With `desc`
 *   it appears at most once: if the walk had passed it, it is not shown again; if not, this walk
 *   misses it (the next walk's first page has it). With `asc` it may appear twice: at its old place
 *   if already passed, and again at the end.
 */
import { createHash } from "node:crypto";
import { SteadError } from "../errors.js";
import { RUN_STATUSES, type RunFilter, type RunPage, type RunQuery, type RunRow, type RunSortKey, type RunStatus, type SortOrder } from "./records.js";

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;
/** Longest filter text (a definition, a session or parent id, an id prefix). */
const MAX_TEXT = 1000;
const MAX_CURSOR = 2048;

export interface CheckedFilter {
  /** Distinct, in RUN_STATUSES order; empty: any status. */
  statuses: RunStatus[];
  definition?: string;
  sessionId?: string;
  parentId?: string;
  createdSince?: number;
  createdBefore?: number;
  updatedSince?: number;
  updatedBefore?: number;
  /** The prefix as a half-open range of ids in code point order (= UTF-8 byte order): [from, to), no `to` past the last code point. */
  idRange?: { from: string; to: string | null };
}

export interface CheckedQuery {
  filter: CheckedFilter;
  sort: RunSortKey;
  order: SortOrder;
  limit: number;
  /** The position the page starts after; null for a first page. */
  after: { key: number; id: string } | null;
  /** Of the filters, as the cursor carries it. */
  digest: string;
}

function bad(field: string, problem: string, fix: string): SteadError {
  return new SteadError("STEAD_BAD_OPTION", `run listing: ${field} ${problem}`, { field, fix });
}

const FILTER_FIELDS = ["status", "definition", "sessionId", "parentId", "createdSince", "createdBefore", "updatedSince", "updatedBefore", "idPrefix"] as const;
const QUERY_FIELDS: readonly string[] = [...FILTER_FIELDS, "sort", "order", "limit", "cursor"];
const SORTS: readonly RunSortKey[] = ["createdAt", "updatedAt"];
const ORDERS: readonly SortOrder[] = ["asc", "desc"];

function text(field: string, v: unknown): string {
  if (typeof v !== "string" || v.length === 0 || v.length > MAX_TEXT) throw bad(field, `must be text of 1-${MAX_TEXT} characters`, `pass ${field} as a non-empty string, or leave it out`);
  if (/\p{Cs}/u.test(v)) throw bad(field, "holds a lone surrogate", `pass ${field} as well-formed text`);
  return v;
}

function time(field: string, v: unknown): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v)) throw bad(field, `must be a time in whole milliseconds since the epoch (got ${typeof v === "number" ? String(v) : typeof v})`, `pass ${field} as an integer number of ms`);
  return v;
}

function statuses(v: unknown): RunStatus[] {
  if (!Array.isArray(v)) throw bad("status", "must be a list of run statuses", `pass an array of: ${RUN_STATUSES.join(", ")}`);
  const list = v as readonly unknown[];
  const unknown: unknown = list.find((s) => !(RUN_STATUSES as readonly unknown[]).includes(s));
  if (unknown !== undefined) throw bad("status", `has an unknown run status ${JSON.stringify(unknown) ?? typeof unknown}`, `use statuses among: ${RUN_STATUSES.join(", ")}`);
  return RUN_STATUSES.filter((s) => list.includes(s));
}

/** The least string greater than every string starting with `prefix`, in code point order; null when there is none. */
export function prefixEnd(prefix: string): string | null {
  const points = [...prefix].map((c) => c.codePointAt(0) ?? 0);
  while (points.length > 0) {
    const last = points.pop() ?? 0;
    if (last < 0x10ffff) {
      points.push(last === 0xd7ff ? 0xe000 : last + 1);
      return String.fromCodePoint(...points);
    }
  }
  return null;
}

export function checkRunFilter(filter: RunFilter, allowed: readonly string[] = FILTER_FIELDS): CheckedFilter {
  if (typeof filter !== "object" || filter === null || Array.isArray(filter)) throw bad("filter", "must be an object", "pass the filters as an object of fields");
  const raw = filter as Record<string, unknown>;
  const unknown = Object.keys(raw).find((k) => raw[k] !== undefined && !allowed.includes(k));
  if (unknown !== undefined) throw bad(JSON.stringify(unknown), "is not a field of a run listing", `use only: ${allowed.join(", ")}`);
  const out: CheckedFilter = { statuses: raw.status === undefined ? [] : statuses(raw.status) };
  for (const f of ["definition", "sessionId", "parentId"] as const) if (raw[f] !== undefined) out[f] = text(f, raw[f]);
  for (const f of ["createdSince", "createdBefore", "updatedSince", "updatedBefore"] as const) if (raw[f] !== undefined) out[f] = time(f, raw[f]);
  if (raw.idPrefix !== undefined) {
    const p = text("idPrefix", raw.idPrefix);
    out.idRange = { from: p, to: prefixEnd(p) };
  }
  return out;
}

function filterDigest(f: CheckedFilter): string {
  const canonical = JSON.stringify([f.statuses, f.definition, f.sessionId, f.parentId, f.createdSince, f.createdBefore, f.updatedSince, f.updatedBefore, f.idRange?.from].map((v) => v ?? null));
  return createHash("sha256").update(canonical).digest("base64url").slice(0, 16);
}

const SORT_CODE: Record<RunSortKey, string> = { createdAt: "c", updatedAt: "u" };
const ORDER_CODE: Record<SortOrder, string> = { asc: "a", desc: "d" };

export function encodeCursor(q: Pick<CheckedQuery, "sort" | "order" | "digest">, last: RunRow): string {
  const key = q.sort === "createdAt" ? last.createdAt : last.updatedAt;
  return Buffer.from(JSON.stringify([1, SORT_CODE[q.sort], ORDER_CODE[q.order], key, last.id, q.digest])).toString("base64url");
}

const CURSOR_FIX = "pass the nextCursor of the page before unchanged, or leave the cursor out to start from the first page";

function decodeCursor(v: unknown, sort: RunSortKey, order: SortOrder, digest: string): { key: number; id: string } {
  if (typeof v !== "string" || v.length === 0 || v.length > MAX_CURSOR || !/^[A-Za-z0-9_-]+$/.test(v)) throw bad("cursor", "is not a cursor this store made", CURSOR_FIX);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(v, "base64url").toString("utf8"));
  } catch {
    throw bad("cursor", "is not a cursor this store made", CURSOR_FIX);
  }
  if (!Array.isArray(parsed) || parsed.length !== 6 || parsed[0] !== 1) throw bad("cursor", "is not a cursor this store made", CURSOR_FIX);
  const [, s, o, key, id, d] = parsed as unknown[];
  if (typeof key !== "number" || !Number.isSafeInteger(key) || typeof id !== "string" || id.length === 0 || id.length > MAX_TEXT || typeof d !== "string") {
    throw bad("cursor", "is not a cursor this store made", CURSOR_FIX);
  }
  if (s !== SORT_CODE[sort] || o !== ORDER_CODE[order]) {
    const was = `${s === "u" ? "updatedAt" : "createdAt"} ${o === "a" ? "asc" : "desc"}`;
    throw bad("cursor", `continues a listing sorted by ${was}, not ${sort} ${order}`, "pass the sort and order of the first page with its cursor, or leave the cursor out to start over");
  }
  if (d !== digest) throw bad("cursor", "continues a listing with other filters", "pass the filters of the first page with its cursor, or leave the cursor out to start over");
  return { key, id };
}

/** The query checked and normalised; throws STEAD_BAD_OPTION naming the field at fault. */
export function checkRunQuery(query: RunQuery): CheckedQuery {
  const filter = checkRunFilter(query, QUERY_FIELDS);
  const sort = query.sort ?? "createdAt";
  if (!SORTS.includes(sort)) throw bad("sort", `must be one of ${SORTS.join(", ")} (got ${JSON.stringify(sort)})`, `sort by ${SORTS.join(" or ")}`);
  const order = query.order ?? "desc";
  if (!ORDERS.includes(order)) throw bad("order", `must be asc or desc (got ${JSON.stringify(order)})`, "pass asc or desc");
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  if (typeof limit !== "number" || !Number.isSafeInteger(limit) || limit < 1) throw bad("limit", `must be a whole number from 1 to ${MAX_PAGE_SIZE}`, `pass a page size from 1 to ${MAX_PAGE_SIZE}`);
  if (limit > MAX_PAGE_SIZE) throw bad("limit", `${limit} is over the largest page, ${MAX_PAGE_SIZE} runs`, `ask for at most ${MAX_PAGE_SIZE} runs and follow nextCursor for the rest`);
  const digest = filterDigest(filter);
  const after = query.cursor === undefined ? null : decodeCursor(query.cursor, sort, order, digest);
  return { filter, sort, order, limit, after, digest };
}

/** The ids of a runActivity read: distinct, at most a page of them. */
export function checkRunIds(runIds: readonly string[]): string[] {
  const list: readonly unknown[] = runIds;
  if (!Array.isArray(list) || list.some((id) => typeof id !== "string")) throw bad("runIds", "must be a list of run ids", "pass the ids of a page of runs");
  const distinct = [...new Set(runIds)];
  if (distinct.length > MAX_PAGE_SIZE) throw bad("runIds", `lists ${distinct.length} runs, over the largest page, ${MAX_PAGE_SIZE}`, `ask for at most ${MAX_PAGE_SIZE} runs at a time`);
  return distinct;
}

/** A page from the rows of listRunsQuery, which fetches one run more than the page to know whether another follows. */
export function pageOf(q: CheckedQuery, rows: RunRow[]): RunPage {
  const runs = rows.slice(0, q.limit);
  const last = runs[runs.length - 1];
  return { runs, nextCursor: rows.length > q.limit && last ? encodeCursor(q, last) : null };
}
