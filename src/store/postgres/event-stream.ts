/**
 * Postgres's event stream: a position is a transaction snapshot, not a number.
 *
 * Hazard it answers: an event's seq is taken when its row is inserted, long before its transaction
 * commits, so events become visible out of seq order and a follower that moves past a number skips
 * a lower one committed later. Each event row records the top-level transaction that wrote it
 * (events.xid, by its default). A read runs in one statement, whose snapshot S (the one
 * pg_current_snapshot() reports) says which transactions are complete: every id below S.xmax
 * except those in S.xip, in progress. The read delivers the visible rows of transactions that
 * were not complete at the previous position, and S becomes the next position. No transaction is
 * waited for: one still open stays listed in the position, and its rows are delivered by the read
 * after it commits, by id (events_xid serves both probes: listed ids, and ids from the previous
 * xmax up).
 *
 * A page cut short by the limit cannot end at a snapshot: it ends at a number within the commits
 * of one snapshot. Its position is the snapshot it continues from (`base`), the snapshot whose
 * commits it is delivering (`page.snap`), and the last number delivered (`page.after`).
 *
 * Encoding: `p`, the base snapshot, then `~after~pagesnapshot` when a page is open; a snapshot is
 * its xmax in base 36 and, for each id in progress, `.` and xmax minus that id in base 36. The
 * snapshot lists every transaction in progress in the cluster (other databases' too): the
 * position's length grows with them, a few characters each.
 */
import { toEvent } from "../rows.js";
import type { EventPage, EventRow, EventStreamFilter } from "../types.js";
import { badPosition, base36, checkStreamFilter, positionText } from "../event-stream.js";

/** Transactions complete in it: every id below xmax, except those in xip (sorted, each below xmax). */
export interface Snap {
  xmax: number;
  xip: readonly number[];
}

export interface StreamPosition {
  /** Every event of a transaction complete here was delivered; null: none. */
  base: Snap | null;
  /** A page open within `snap`'s commits: of those not complete in `base`, every event numbered up to `after` was delivered. */
  page?: { snap: Snap; after: number };
}

const b36 = (n: number): string => n.toString(36);
const encodeSnap = (s: Snap): string => b36(s.xmax) + s.xip.map((x) => `.${b36(s.xmax - x)}`).join("");

export function encodePosition(p: StreamPosition): string {
  return `p${p.base ? encodeSnap(p.base) : ""}${p.page ? `~${b36(p.page.after)}~${encodeSnap(p.page.snap)}` : ""}`;
}

function decodeSnap(text: string): Snap | undefined {
  const [head, ...rest] = text.split(".");
  const xmax = base36(head);
  if (xmax === undefined || xmax < 1) return undefined;
  const xip: number[] = [];
  for (const part of rest) {
    const d = base36(part);
    if (d === undefined || d < 1 || d >= xmax) return undefined;
    xip.push(xmax - d);
  }
  xip.sort((a, b) => a - b);
  for (let i = 1; i < xip.length; i++) if (xip[i] === xip[i - 1]) return undefined;
  return { xmax, xip };
}

/** Whether every transaction complete in `a` is complete in `b` (b was taken at or after a). */
function covers(b: Snap, a: Snap): boolean {
  if (b.xmax < a.xmax) return false;
  const open = new Set(a.xip);
  return b.xip.every((x) => x >= a.xmax || open.has(x));
}

export function decodePosition(position: string | null): StreamPosition {
  if (position === null) return { base: null };
  const text = positionText(position);
  const m = /^p([0-9a-z.]*)(?:~([0-9a-z]+)~([0-9a-z.]+))?$/.exec(text);
  const bad = () => badPosition(position, "is not a position of a Postgres store's event stream");
  if (!m) throw bad();
  const base = m[1] ? decodeSnap(m[1]) : null;
  if (base === undefined) throw bad();
  if (m[2] === undefined || m[3] === undefined) return { base };
  const after = base36(m[2]);
  const snap = decodeSnap(m[3]);
  if (after === undefined || snap === undefined || (base !== null && !covers(snap, base))) throw bad();
  return { base, page: { snap, after } };
}

/** pg_snapshot's text, `xmin:xmax:xip,...`. */
function parseSnapshot(text: string): Snap {
  const [, xmax, xip] = text.split(":");
  return { xmax: Number(xmax), xip: xip ? xip.split(",").map(Number).sort((a, b) => a - b) : [] };
}

export interface StreamQuery {
  sql: string;
  params: unknown[];
}

/**
 * The read's one statement. Part 0, the open page's rest: not complete in base, complete in
 * page.snap, numbered past page.after. Part 1: not complete in the snapshot delivered up to (the
 * page's, or base); the statement's own snapshot makes them visible or not. Rows come part by
 * part, each in number order, one more than the limit to tell whether the page was cut. The
 * statement's snapshot is returned on every row (one row of nulls when no event matched).
 */
export function streamQuery(p: StreamPosition, runIds: readonly string[] | null, limit: number): StreamQuery {
  const params: unknown[] = [];
  const param = (v: unknown, cast: string): string => {
    params.push(v);
    return `$${params.length}::${cast}`;
  };
  const runs = runIds === null ? [] : [`run_id = ANY(${param(runIds, "text[]")})`];
  const n = param(limit + 1, "int");
  const notComplete = (s: Snap) => `(xid >= ${param(s.xmax, "bigint")} OR xid = ANY(${param(s.xip, "bigint[]")}))`;
  const complete = (s: Snap) => `xid < ${param(s.xmax, "bigint")} AND xid <> ALL(${param(s.xip, "bigint[]")})`;
  const part = (k: number, where: string[]) =>
    `(SELECT ${k} AS part, seq, run_id, type, at, data FROM events${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY seq LIMIT ${n})`;
  const parts: string[] = [];
  if (p.page) parts.push(part(0, [...runs, ...(p.base ? [notComplete(p.base)] : []), complete(p.page.snap), `seq > ${param(p.page.after, "bigint")}`]));
  const from = p.page ? p.page.snap : p.base;
  parts.push(part(1, [...runs, ...(from ? [notComplete(from)] : [])]));
  const sql = `WITH s AS MATERIALIZED (SELECT pg_current_snapshot()::text AS snap)
SELECT s.snap, e.* FROM s LEFT JOIN (
  SELECT * FROM (${parts.join("\n  UNION ALL ")}) u ORDER BY part, seq LIMIT ${n}
) e ON true
ORDER BY e.part, e.seq`;
  return { sql, params };
}

type Raw = Record<string, unknown>;

/** The page a read's rows make, and the position after it; refuses a position later than the read's snapshot. */
export function streamPage(position: string | null, p: StreamPosition, rows: readonly Raw[], limit: number): EventPage {
  const now = parseSnapshot(String(rows[0]?.snap));
  if ((p.base && !covers(now, p.base)) || (p.page && !covers(now, p.page.snap))) {
    throw badPosition(position, "is later than this store's history: it came from another database");
  }
  const found = rows.filter((r) => r.part !== null && r.part !== undefined);
  const page = found.slice(0, limit);
  const events: EventRow[] = page.map(toEvent);
  const positions = page.map((r) => encodePosition(after(p, now, r)));
  if (found.length <= limit) {
    // The page reached the snapshot's end: its last event continues from the snapshot itself.
    const position = encodePosition({ base: now });
    if (positions.length > 0) positions[positions.length - 1] = position;
    return { events, position, positions };
  }
  return { events, position: positions[positions.length - 1] as string, positions };
}

/**
 * The position just after row `r` of a read from `p` at snapshot `now`. Part 0 rows are the open
 * page's rest (within `p.page.snap`'s commits); part 1 rows are every commit of `now` not complete
 * in the snapshot delivered up to, in number order, so a position after one of them is a page open
 * within `now`'s commits.
 */
function after(p: StreamPosition, now: Snap, r: Raw): StreamPosition {
  const seq = Number(r.seq);
  return Number(r.part) === 0 && p.page ? { base: p.base, page: { snap: p.page.snap, after: seq } } : { base: p.page ? p.page.snap : p.base, page: { snap: now, after: seq } };
}

export function checkedStream(position: string | null, filter: EventStreamFilter): { p: StreamPosition; runIds: readonly string[] | null; limit: number } {
  const p = decodePosition(position);
  const { runIds, limit } = checkStreamFilter(filter);
  return { p, runIds, limit };
}
