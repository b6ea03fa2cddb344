/** `stead.definitions`: what workers serve and served, and the live workers, from the store alone. */
import { listDefinitions, type DefinitionView } from "../../engine/definitions/served-definitions.js";
import type { WorkerView } from "../../engine/definitions/serving-workers.js";
import { callableNamespace, type StoreHost } from "./bind.js";

type DefinitionFilter = { name?: string };

export interface SteadDefinitions {
  /** What workers serve, and what they served before, read from the store alone (no user code is loaded). */
  list(filter?: DefinitionFilter): Promise<DefinitionView[]>;
  /** The workers alive now by their announcements (id, host, pid, what each serves, since when), from the store alone. */
  workers(): Promise<WorkerView[]>;
}

/** `stead.definitions(filter)`, kept for one release. */
export interface FlatDefinitions {
  /** @deprecated use `stead.definitions.list()` */
  (filter?: DefinitionFilter): Promise<DefinitionView[]>;
}

export type DefinitionsBodies = Omit<SteadDefinitions, "list">;
export const DEFINITIONS_VERBS = { workers: "liveWorkers" } as const;

export function steadDefinitions(host: StoreHost, bodies: DefinitionsBodies): Readonly<SteadDefinitions> & FlatDefinitions {
  const list = async (filter: DefinitionFilter = {}): Promise<DefinitionView[]> => {
    await host.ready();
    return listDefinitions(host.store, filter);
  };
  return callableNamespace({ ...bodies, list }, "definitions", "definitions.list", list);
}
