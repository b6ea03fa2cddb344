/**
 * Grouped counts for metrics on SQLite (ports/tallies.ts), from sql/tally.ts.
 */
import type { StoreTally, Tallies } from "../ports/tallies.js";
import type { SqliteConnection } from "./connection.js";
import * as tallies from "../sql/tally.js";

type Raw = Record<string, unknown>;

export function sqliteTallies(c: SqliteConnection): Tallies {
  return {
    tally(): Promise<StoreTally> {
      return c.read(() => tallies.toTally(c.stmt(tallies.TALLY).all() as Raw[]));
    },
  };
}
