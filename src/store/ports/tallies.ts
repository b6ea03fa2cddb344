/**
 * Counts of a store's runs, open waits and open holds, for a scrape (`/metrics`): one grouped
 * count per table, never a row per run.
 */
import type { HoldKind, RunStatus, WaitKind } from "../records.js";

export interface StoreTally {
  /** Runs by status; a status no run has is absent. */
  runs: Partial<Record<RunStatus, number>>;
  /** Open waits by kind; a kind with none open is absent. */
  openWaits: Partial<Record<WaitKind, number>>;
  /** Open holds by kind; a kind with none open is absent. */
  openHolds: Partial<Record<HoldKind, number>>;
}

export interface Tallies {
  tally(): Promise<StoreTally>;
}
