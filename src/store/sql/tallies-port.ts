/** Grouped counts for metrics (ports/tallies.ts), written once for every SQL store on its driver. */
import type { StoreTally, Tallies } from "../ports/tallies.js";
import type { SqlDriver } from "./driver.js";
import { TALLY, toTally } from "./tally.js";

export function sqlTallies(d: SqlDriver): Tallies {
  return {
    async tally(): Promise<StoreTally> {
      return toTally(await d.all(TALLY));
    },
  };
}
