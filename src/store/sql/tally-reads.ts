/** Grouped counts for metrics (ports/tallies.ts), once for every SQL store: sql/tally.ts's statement. */
import type { StoreTally, Tallies } from "../ports/tallies.js";
import type { SqlDriver } from "./driver.js";
import { TALLY, toTally } from "./tally.js";

export function tallyReads(d: SqlDriver): Tallies {
  return {
    async tally(): Promise<StoreTally> {
      return toTally(await d.all(TALLY));
    },
  };
}
