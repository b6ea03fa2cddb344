/**
 * The grouped counts of `Tallies.tally`, the same text on both SQL stores: one statement, so its
 * three counts are of one snapshot.
 */
import type { StoreTally } from "../ports/tallies.js";

export const TALLY = `SELECT 'runs' AS t, status AS k, count(*) AS n FROM runs GROUP BY status
  UNION ALL SELECT 'waits', kind, count(*) FROM waits WHERE status = 'open' GROUP BY kind
  UNION ALL SELECT 'holds', kind, count(*) FROM holds WHERE status = 'open' GROUP BY kind`;

/** The tally from TALLY's rows (a bigint count arrives as text from Postgres). */
export function toTally(rows: readonly Record<string, unknown>[]): StoreTally {
  const of = (t: string) => Object.fromEntries(rows.filter((r) => r.t === t).map((r) => [String(r.k), Number(r.n)]));
  return { runs: of("runs"), openWaits: of("waits"), openHolds: of("holds") };
}
