import { performance } from "node:perf_hooks";
import { crashPoint } from "../engine/crash-points.js";
import type { Execution } from "../engine/execution/index.js";
import { isStorageFull } from "../store/faults.js";
import type { ClaimsAndLeases } from "../store/types.js";
import type { StorageGuard } from "./storage-guard.js";

/** When a lease was last known good: the send time of its claim or last successful renewal, on both clocks. */
export interface LeaseStamp {
  wall: number;
  mono: number;
}

export const stamp = (): LeaseStamp => ({ wall: Date.now(), mono: performance.now() });

/**
 * Time since `s`, by whichever clock shows more: the monotonic clock stops while a VM is
 * suspended, and the wall clock may be set back; neither alone may be trusted to say a lease is fresh.
 */
const since = (s: LeaseStamp): number => Math.max(Date.now() - s.wall, performance.now() - s.mono);

/**
 * A lease younger than this share of its length is used without asking the store: the heartbeat
 * renews every third of it, so a healthy worker never renews on demand.
 */
const FRESH_SHARE = 0.5;

/** Renewals asked for before a step whose answers all came back too late to prove the lease: then it counts as lost. */
const RENEW_TRIES = 3;

/** Stale past this share of its length: past expiry another worker may own the run. */
const STALE_SHARE = 0.75;

interface Held {
  exec: Execution;
  renewed: LeaseStamp;
  /** A renewal asked for by the execution (its lease looked stale before a step), shared by concurrent asks. */
  renewal?: Promise<boolean>;
}

export interface LeaseKeepingOptions {
  leaseMs: number;
  heartbeatMs: number;
  /** The worker id leases are renewed under (it changes when presence in a shared store is lost). */
  workerId: () => string;
  /** Done at every beat after the stale check, before the renewal. */
  onBeat: () => void;
  /** A store fault met while renewing (reported; the lease's fate is decided here). */
  onError: (e: unknown) => void;
}

/**
 * The leases of the runs this worker executes: renewed all in one statement per heartbeat, and
 * renewed on demand before a step whose lease is no longer fresh. It alone decides that a lease
 * is lost, and ends that run's execution.
 *
 * Invariants:
 * - A run is executed only while its lease is held; when a renewal does not return a run, or no
 *   renewal has succeeded for 3/4 of the lease, that run's execution is ended at once.
 * - No step function starts on a lease older than half its length (by either clock) without a
 *   renewal first: a worker woken from a freeze stops the run instead of repeating a step the new
 *   owner has completed (see StepRunner.leaseHeld, engine/execution/step-runner.ts).
 * - Runs handed back on a full store (the storage guard's) keep their leases, renewed with the rest.
 */
export class LeaseKeeper {
  private readonly held = new Map<string, Held>();
  private timer: NodeJS.Timeout | undefined;
  /** A heartbeat's renewal is in flight: the next beat is skipped, never queued. */
  private renewing = false;

  constructor(
    private readonly store: Pick<ClaimsAndLeases, "renewLeases">,
    private readonly storage: Pick<StorageGuard, "paused" | "leases" | "forget">,
    private readonly options: LeaseKeepingOptions,
  ) {}

  /** Runs executing under a lease of this worker. */
  get size(): number {
    return this.held.size;
  }

  executions(): Execution[] {
    return [...this.held.values()].map((h) => h.exec);
  }

  /** Takes on a just-claimed run's lease, claimed at `sent`. */
  hold(exec: Execution, sent: LeaseStamp): void {
    // A worker that stalled past its own lease may reclaim its own run: the older execution is
    // fenced out already, so end it, and let only the newest one own the run's slot.
    this.held.get(exec.runId)?.exec.abort("lease-lost");
    this.held.set(exec.runId, { exec, renewed: sent });
  }

  /** An execution ended: its lease is no longer kept (unless a newer execution holds the run). */
  letGo(exec: Execution): void {
    if (this.held.get(exec.runId)?.exec === exec) this.held.delete(exec.runId);
  }

  /** Ends every execution at once, without writing. */
  abortAll(kind: "lease-lost" | "aborted", error?: string): void {
    for (const h of this.held.values()) h.exec.abort(kind, error);
  }

  /** The heartbeat: from start() until the worker is stopped or failed. */
  start(): void {
    this.timer = setInterval(() => void this.beat(), this.options.heartbeatMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async beat(): Promise<void> {
    // Checked at every beat, not only when a renewal fails: a renewal on a connection that went
    // silent may hang long past the lease.
    this.abortStale();
    this.options.onBeat();
    const handedBack = this.storage.leases();
    if ((this.held.size === 0 && handedBack.length === 0) || this.renewing) return;
    this.renewing = true;
    const leases = [...[...this.held.values()].map((h) => ({ runId: h.exec.runId, fence: h.exec.fence })), ...handedBack];
    const sent = stamp();
    try {
      const renewed = new Set(await this.store.renewLeases(this.options.workerId(), leases, this.options.leaseMs, sent.wall));
      for (const [runId, h] of this.held) {
        if (renewed.has(runId)) h.renewed = sent;
        else if (leases.some((l) => l.runId === runId && l.fence === h.exec.fence)) h.exec.abort("lease-lost");
      }
      for (const l of handedBack) if (!renewed.has(l.runId)) this.storage.forget(l.runId);
    } catch (e) {
      this.options.onError(e);
      this.abortStale();
    } finally {
      this.renewing = false;
    }
  }

  /** Stops runs whose lease was not renewed for 3/4 of its length: past expiry another worker may own them. */
  private abortStale(): void {
    for (const h of this.held.values()) {
      if (since(h.renewed) >= this.options.leaseMs * STALE_SHARE) h.exec.abort("lease-lost");
    }
  }

  /** The execution's question before a step (ExecutionDeps.checkLease). */
  check(exec: Execution): true | Promise<boolean> {
    const h = this.held.get(exec.runId);
    if (!h || h.exec !== exec) return Promise.resolve(false);
    // No step starts while the store cannot write: its outcome could not be recorded.
    if (this.storage.paused) {
      exec.abort("storage", "the store cannot write");
      return Promise.resolve(false);
    }
    if (since(h.renewed) < this.options.leaseMs * FRESH_SHARE) return true;
    h.renewal ??= this.renewNow(h).finally(() => (h.renewal = undefined));
    return h.renewal;
  }

  /**
   * Renews one lease at once; a lease the store no longer gives this worker ends the execution.
   *
   * Hazard: a renewal's answer proves the lease only until its send time plus the lease's length.
   * A worker frozen while the renewal was in flight wakes to a yes that may be long stale, with
   * another worker past the step by now; so an answer that took half a lease or more is asked
   * again, and one that keeps coming back that late ends the execution as lost.
   */
  private async renewNow(h: Held): Promise<boolean> {
    for (let tries = 0; tries < RENEW_TRIES; tries++) {
      const sent = stamp();
      try {
        const renewed = await this.store.renewLeases(this.options.workerId(), [{ runId: h.exec.runId, fence: h.exec.fence }], this.options.leaseMs, sent.wall);
        if (!renewed.includes(h.exec.runId)) break;
        crashPoint("after-renewal", []);
        h.renewed = sent;
        if (since(sent) < this.options.leaseMs * FRESH_SHARE) return true;
      } catch (e) {
        this.options.onError(e);
        if (isStorageFull(e)) {
          h.exec.abort("storage", e instanceof Error ? e.message : String(e));
          return false;
        }
        break;
      }
    }
    // Not renewed, or not known to be: the run may be another worker's now, so no user code runs.
    h.exec.abort("lease-lost");
    return false;
  }
}
