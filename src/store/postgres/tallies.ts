/**
 * Grouped counts for metrics on Postgres (ports/tallies.ts), from sql/tally.ts.
 */
import type { StoreTally, Tallies } from "../ports/tallies.js";
import * as tallies from "../sql/tally.js";
import type { PostgresConnection } from "./connection.js";

export function postgresTallies(pg: PostgresConnection): Tallies {
  return {
    async tally(): Promise<StoreTally> {
      return tallies.toTally(await pg.query(tallies.TALLY));
    },
  };
}
