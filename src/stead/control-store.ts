import type { CommitOptions, Store, Unit, UnitResult } from "../store/types.js";
import { layeredStore } from "../store/layered-store.js";
import { GroupCommitter } from "../worker/group-commit.js";

/** The store control commands write through, and what must happen before it closes. */
export interface ControlStore {
  store: Store;
  /** Resolves once every control commit asked for so far is written. */
  drain(): Promise<void>;
}

/**
 * The store control commands (approve, deny, signal, pause, cancel, release...) write through. On
 * SQLite, a one-unit commit joins the others asked for in the same turn of the event loop in one
 * transaction, as a worker's steps do, and each caller is answered once that transaction is
 * durable; each unit keeps its own preconditions and is refused alone. Postgres commits them as
 * they come: its pool writes them side by side, and one slow batch (a row lock, a retry) would
 * hold back every control command of the process. Everything else is the store's own.
 */
export function controlStore(store: Store): ControlStore {
  if (store.dialect !== "sqlite") return { store, drain: () => Promise.resolve() };
  const committer = new GroupCommitter(store, { maxBatch: store.maxUnitsPerCommit ?? 500 });
  const commit = (units: Unit[], options?: CommitOptions): Promise<UnitResult[]> => {
    const [only] = units;
    return only && units.length === 1 && !options ? committer.commit(only).then((r) => [r]) : store.commit(units, options);
  };
  return { store: layeredStore(store, new Map<PropertyKey, unknown>([["commit", commit]])), drain: () => committer.drain() };
}
