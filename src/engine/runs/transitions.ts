/**
 * A lifecycle's allowed transitions, each with the reason it exists. The execution's
 * (engine/execution/lifecycle.ts) and the worker's (worker/worker-state.ts) are two such tables.
 */
export type TransitionTable<K extends string> = { readonly [F in K]: { readonly [T in K]?: string } };

/** Throws an internal error when `table` does not list `from -> to`: anything unlisted is a bug. */
export function checkTransition<K extends string>(table: TransitionTable<K>, what: string, from: K, to: K): void {
  if (table[from][to] === undefined) throw new Error(`internal: ${what} cannot go from ${from} to ${to}`);
}
