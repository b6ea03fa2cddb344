/** `stead.waits`: open waits across runs (an approvals inbox). */
import type { OpenWaits } from "../../engine/runs/open-waits.js";
import type { WaitView } from "../../engine/runs/views.js";
import type { WaitKind } from "../../store/types.js";
import { callableNamespace } from "./bind.js";
import type { SteadRuns } from "./runs.js";

export interface SteadWaits {
  /** Open waits across runs, newest first; see engine/runs/open-waits.ts for the bound on runs looked at. */
  list(filter?: { kind?: WaitKind; limit?: number }): Promise<OpenWaits>;
}

/** `stead.waits(runId)` (one run's waits), kept for one release. */
export interface FlatWaits {
  /** @deprecated use `stead.runs.waits(runId)` */
  (runId: string): Promise<WaitView[]>;
}

export const WAITS_VERBS = { list: "openWaits" } as const;

export function steadWaits(bodies: SteadWaits, runs: SteadRuns): Readonly<SteadWaits> & FlatWaits {
  return callableNamespace({ ...bodies }, "waits", "runs.waits", (runId: string) => runs.waits(runId));
}
