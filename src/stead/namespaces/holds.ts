/** `stead.holds`: holds across runs, or one run's. */
import { holdView, type HoldView } from "../../engine/runs/views.js";
import { callableNamespace, type StoreHost } from "./bind.js";

type HoldFilter = { runId?: string; open?: boolean };

export interface SteadHolds {
  /**
   * Holds, open ones unless `open` is false. Across runs it is a listing: a hold whose sealed
   * values fail to open is listed marked `damaged`, so one cannot hide the others. One run's
   * holds (`runId`) are a read of that run, and refuse such a hold as the run's other reads do.
   */
  list(filter?: HoldFilter): Promise<HoldView[]>;
}

/** `stead.holds(filter)`, kept for one release. */
export interface FlatHolds {
  /** @deprecated use `stead.holds.list()` */
  (filter?: HoldFilter): Promise<HoldView[]>;
}

export function steadHolds(host: StoreHost): Readonly<SteadHolds> & FlatHolds {
  const list = async (filter: HoldFilter = {}): Promise<HoldView[]> => {
    await host.ready();
    const rows = await host.store.holds({ ...(filter.runId ? { runId: filter.runId } : { markDamaged: true }), ...(filter.open === false ? {} : { status: "open" as const }) });
    return rows.map(holdView);
  };
  return callableNamespace({ list }, "holds", "holds.list", list);
}
