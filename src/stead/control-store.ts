import type { CommitOptions, Store, Unit, UnitResult } from "../store/types.js";
import { layeredStore } from "../store/layered-store.js";
import { GroupCommitter } from "../worker/group-commit.js";

/**
 * The store control commands (approve, deny, signal, pause, cancel, release...) write through: a
 * one-unit commit joins the others asked for in the same turn of the event loop in one
 * transaction, as a worker's steps do, and each caller is answered once that transaction is
 * durable. Each unit keeps its own preconditions and is refused alone. Everything else is the
 * store's own.
 */
export function groupCommitting(store: Store): Store {
  const committer = new GroupCommitter(store);
  const commit = (units: Unit[], options?: CommitOptions): Promise<UnitResult[]> => {
    const [only] = units;
    return only && units.length === 1 && !options ? committer.commit(only).then((r) => [r]) : store.commit(units, options);
  };
  return layeredStore(store, new Map<PropertyKey, unknown>([["commit", commit]]));
}
