import { expect, it } from "vitest";
import type { TransitionTable } from "../../src/engine/runs/transitions.js";

interface Machine<S extends { kind: K }, K extends string> {
  readonly current: S;
  move(to: S): void;
}

/**
 * The cases every lifecycle table gets: each listed transition is taken, each other one is
 * refused with an internal error naming both ends, and the state stays where it was.
 */
export function transitionTableCases<K extends string, S extends { kind: K }>(o: {
  table: TransitionTable<K>;
  /** "an execution", "a worker": as the error names it. */
  what: string;
  samples: { [P in K]: S };
  /** A machine brought to `kind` by legal moves only. */
  at: (kind: K) => Machine<S, K>;
  refusals: number;
}): void {
  const kinds = Object.keys(o.samples) as K[];
  it("moves along every listed transition", () => {
    for (const from of kinds) {
      for (const to of Object.keys(o.table[from]) as K[]) {
        const life = o.at(from);
        life.move(o.samples[to]);
        expect(life.current).toBe(o.samples[to]);
      }
    }
  });

  it("refuses every other transition with an internal error, and stays where it was", () => {
    let refused = 0;
    for (const from of kinds) {
      for (const to of kinds) {
        if (o.table[from][to] !== undefined) continue;
        const life = o.at(from);
        expect(() => life.move(o.samples[to]), `${from} -> ${to}`).toThrow(`internal: ${o.what} cannot go from ${from} to ${to}`);
        expect(life.current.kind).toBe(from);
        refused++;
      }
    }
    expect(refused).toBe(o.refusals);
  });
}
