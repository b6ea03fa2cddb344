/** Claims and leases: which worker may execute a run now, and for how long. */
import type { ClaimedRun, ClaimRequest, LeaseInfo } from "../records.js";

export interface ClaimsAndLeases {
  /**
   * Whose clock judges lease times. "caller": the `now` passed to claim/renewLeases (one host, one
   * clock). "store": the store's own clock (shared stores: workers' clocks may disagree); `now` is ignored.
   */
  readonly leaseClock: "caller" | "store";

  /**
   * Claims up to `limit` runnable runs (pending, or running with an expired lease) of the given
   * definitions, skipping a session's turn while any earlier turn of its session is not terminal
   * (so a session's turns run one at a time, in order, across all workers): sets the lease, increments the fence, writes `run.claimed`, and counts a lost claim
   * when the previous lease expired while running.
   */
  claim(request: ClaimRequest): Promise<ClaimedRun[]>;

  /**
   * The runs `claim` would take now (same rule and order), with their journals, changing nothing:
   * a worker runs restore hooks for them before it claims (a failed hook must leave a run untouched).
   * `previousStatus` is the run's current status.
   */
  claimable(request: Omit<ClaimRequest, "owner" | "leaseMs">): Promise<ClaimedRun[]>;

  /**
   * Renews, in one statement, every lease still held with the given fences; returns the run ids
   * renewed. Stores shared by many hosts judge lease times by their own clock and ignore `now`.
   */
  renewLeases(owner: string, leases: readonly { runId: string; fence: number }[], leaseMs: number, now: number): Promise<string[]>;

  /** Running runs' leases on one host (the sweeper checks whether their owner processes are alive). */
  leasesOnHost(host: string): Promise<LeaseInfo[]>;

  /** Ends a lease at once if it still carries `fence` (its owner process is gone). */
  expireLease(runId: string, fence: number, reason: string): Promise<boolean>;
}
