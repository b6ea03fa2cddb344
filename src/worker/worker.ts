import { EventEmitter } from "node:events";
import { performance } from "node:perf_hooks";
import { SteadError } from "../errors.js";
import { redactTokens } from "../redaction/redact.js";
import type { Redactor } from "../redaction/redactor.js";
import { StreamRedactor, UNREDACTED_STREAM } from "../redaction/stream-redactor.js";
import { deleteFinishedRuns, retentionAge, type RunRetentionOptions } from "../engine/retention.js";
import { readSecret } from "../engine/execution/secrets.js";
import { crashPoint, crashPointArmed } from "../engine/crash-points.js";
import type { AnyDefinition } from "../engine/definition.js";
import { Execution, type ExecutionOutcome } from "../engine/execution/index.js";
import { DEFAULT_PAYLOAD_LIMIT } from "../engine/payload.js";
import type { ClaimedRun, Owner, RunStatus, Store, Unit, WorkerAttachment } from "../store/types.js";
import { GroupCommitter } from "./group-commit.js";
import { newOwner } from "./owner.js";
import { expireDeadOwners, wakeDueTimers } from "./sweeper.js";
import { checkpointOf, DEFAULT_RESTORE_HOOK_TIMEOUT_MS, runRestoreHooks, type RestoreHook } from "./restore-hooks.js";
import type { WorkspaceOptions } from "../engine/run-workspace.js";
import { encodeCheckpoint } from "../workspace/checkpoint.js";
import { gcWorkspaces } from "../workspace/lazy.js";
import { DEFAULT_HEADROOM_BYTES, isStorageFull, isStoreLost } from "../store/faults.js";
import { StorageGuard, type StorageReport } from "./storage-guard.js";
import { ClaimLoop } from "./claim-loop.js";
import { WorkerLifecycle } from "./worker-state.js";
import { ANNOUNCEMENT_RETENTION_MS, Announcer, announcementBound, announcementsOf } from "./announcer.js";

export interface WorkerOptions {
  /** The definitions this worker can execute; it claims only runs of these. */
  definitions: readonly AnyDefinition[];
  /** Runs executed at once. Default 10. */
  concurrency?: number;
  /** Lease length in ms. Default 30 000. A worker on another host takes over a silent worker's runs after this. */
  leaseMs?: number;
  /** Heartbeat period in ms. Default leaseMs / 3. */
  heartbeatMs?: number;
  /** Claim and sweep period in ms when idle. Default 200. */
  pollMs?: number;
  /** On stop(), how long running steps may take to finish before the worker gives up on them. Default 30 000. */
  graceMs?: number;
  /** Claim only these runs (see also `setRunIds`). */
  runIds?: readonly string[];
  /** Run the sweeper (timers, dead owners). Default true. */
  sweep?: boolean;
  payloadLimitBytes?: number;
  maxLostClaims?: number;
  /** How runs' workspaces are restored on resume and captured (see `stead.runs.start(..., { workspace })`). */
  workspace?: WorkspaceOptions;
  /**
   * Metadata of external layers (an image tag, a database snapshot id) recorded with every step
   * write: a flat string map, at most 4 KB as JSON. Not called when absent.
   */
  checkpointMetadata?: () => Record<string, string>;
  /** Applied to checkpoint metadata (as JSON text) before it is stored. Default: values of keys that look secret are replaced. */
  redact?: (text: string) => string;
  /**
   * Where `ctx.secret(name)` reads a secret (default: the environment). Each value read is added
   * to `redactor`, so it is redacted from everything stored from then on.
   */
  secretSource?: (name: string) => string | undefined;
  /**
   * Deletes runs finished at least `finishedBefore` ago, every `everyMs` (default hourly), as
   * `stead gc --finished-before` does: whole run trees and sessions, never one not finished.
   */
  retention?: RunRetentionOptions & { everyMs?: number };
  /** The instance's redactor (Stead passes its own): `ctx.secret` values join it. */
  redactor?: Redactor;
  /**
   * Run one by one before a resumed run is claimed (a run claimed before: after a crash, a wait,
   * a release). The first that throws or times out aborts that resume: nothing is claimed or written.
   */
  restoreHooks?: readonly RestoreHook[];
  /** Per restore hook. Default 10 000 ms. */
  restoreHookTimeoutMs?: number;
  /**
   * Announce the definitions this worker serves in the store (name, kind, fingerprint, input
   * schema), so they can be listed and started by name without their code: refreshed at the
   * heartbeat, alive for `leaseMs` (at least 10 s) after each refresh, withdrawn on a graceful stop. Default: true,
   * unless `runIds` restricts its claims (a foreground run's worker serves no one else).
   */
  announce?: boolean;
  /** After a write failed for lack of space: the room a probe must find before runs continue. Default 8 MiB. */
  storageHeadroomBytes?: number;
  /** How long the store may stay full before each affected run gets a `storage.full` event. Default 30 000 ms. */
  storageAlertMs?: number;
  /** How often a full store is probed for room. Default 1 000 ms. */
  storageProbeMs?: number;
}

export interface WorkerEvents {
  outcome: [runId: string, outcome: ExecutionOutcome];
  /** `previousStatus` "running": the run's last lease had expired (a takeover). */
  claimed: [runId: string, previousStatus: RunStatus];
  /** A unit of this run's writes (a step's outcome, an intent, a wait) is durable, `ms` after it was handed to the group commit. */
  committed: [runId: string, ms: number];
  error: [error: unknown];
  /** The store's room to write changed: full (claims pause), still full, recovered. */
  storage: [report: StorageReport];
  /** The worker stopped for good: its store is gone (deleted or replaced under it). */
  fatal: [error: unknown];
}

/** When a lease was last known good: the send time of its claim or last successful renewal, on both clocks. */
interface LeaseStamp {
  wall: number;
  mono: number;
}

interface Active {
  exec: Execution;
  renewed: LeaseStamp;
  /** A renewal asked for by the execution (its lease looked stale before a step), shared by concurrent asks. */
  renewal?: Promise<boolean>;
}

const stamp = (): LeaseStamp => ({ wall: Date.now(), mono: performance.now() });

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

/** How often the sweeper deletes expired idempotency keys. */
const KEY_PRUNE_MS = 10 * 60 * 1000;

/**
 * A worker claims runnable runs under leases, executes them, renews all its leases in one
 * statement per heartbeat, and sweeps timers and dead owners' leases.
 *
 * Invariants:
 * - A run is executed only while its lease is held; when a renewal does not return a run, or no
 *   renewal has succeeded for 3/4 of the lease, that run's execution is ended at once.
 * - No step function starts on a lease older than half its length (by either clock) without a
 *   renewal first: a worker woken from a freeze stops the run instead of repeating a step the new
 *   owner has completed (see StepRunner.leaseHeld, engine/execution/step-runner.ts).
 */
export class Worker extends EventEmitter<WorkerEvents> {
  private ownerNow: Owner;
  private attachment: WorkerAttachment | undefined;
  private readonly committer: GroupCommitter;
  private readonly active = new Map<string, Active>();
  private readonly byName: Map<string, AnyDefinition>;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly heartbeatMs: number;
  private readonly graceMs: number;
  private readonly loop: ClaimLoop;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  /** A heartbeat's renewal is in flight: the next beat is skipped, never queued. */
  private renewing = false;
  /** Its states and their transitions: worker-state.ts. */
  private readonly life = new WorkerLifecycle();
  private readonly storage: StorageGuard;
  private runIds: readonly string[] | undefined;
  /** Runs whose restore hooks failed: not tried again before this time. */
  private readonly hookBackoff = new Map<string, { until: number; failures: number }>();
  private gcDueAt = 0;
  /** When expired idempotency keys were last deleted (the sweeper does it every KEY_PRUNE_MS). */
  private keysPrunedAt = 0;
  /** The retention pass in progress (stop() waits for it: it reads the store). */
  private gcPass: Promise<void> | undefined;
  /** Restore hook durations of runs about to be claimed, for their `run.resumed` event. */
  private readonly hookReports = new Map<string, { hook: string; ms: number }[]>();
  /** Ends this worker's subscription to its store's in-process wake-ups (Store.onWake). */
  private unhearWakes: (() => void) | undefined;
  /** Announces what this worker serves; undefined when it announces nothing. */
  private readonly announcer: Announcer | undefined;

  constructor(
    private readonly store: Store,
    private readonly options: WorkerOptions,
  ) {
    super();
    // A bad retention age is refused when the worker is made, not an hour later in the background.
    if (options.retention) retentionAge(options.retention.finishedBefore, "retention.finishedBefore");
    this.ownerNow = newOwner();
    this.runIds = options.runIds;
    this.byName = new Map();
    for (const d of options.definitions) {
      const other = this.byName.get(d.name);
      if (other && other !== d) {
        throw new SteadError("STEAD_INVALID_DEFINITION", `two definitions are named "${d.name}"`, {
          fix: "give each workflow a unique name",
        });
      }
      this.byName.set(d.name, d);
    }
    this.concurrency = Math.max(1, options.concurrency ?? 10);
    this.leaseMs = options.leaseMs ?? 30_000;
    this.heartbeatMs = options.heartbeatMs ?? Math.max(50, Math.floor(this.leaseMs / 3));
    this.loop = new ClaimLoop(
      () => this.tick(),
      options.pollMs ?? 200,
      () => this.life.claims,
      () => this.present(),
    );
    this.graceMs = options.graceMs ?? 30_000;
    if (options.announce ?? options.runIds === undefined) {
      const payloadLimit = options.payloadLimitBytes ?? DEFAULT_PAYLOAD_LIMIT;
      this.announcer = new Announcer(store, announcementsOf(this.byName.values(), payloadLimit), announcementBound(this.leaseMs), (e) => {
        this.storeFailed(e);
        this.report(e);
      });
    }
    this.storage = new StorageGuard(store, {
      headroomBytes: options.storageHeadroomBytes ?? DEFAULT_HEADROOM_BYTES,
      alertMs: options.storageAlertMs ?? 30_000,
      probeMs: options.storageProbeMs ?? 1000,
      workerId: () => this.ownerNow.workerId,
      report: (r) => this.emit("storage", r),
      onError: (e) => this.report(e),
    });
    this.committer = new GroupCommitter(store, {
      maxBatch: store.maxUnitsPerCommit ?? 500,
      inFlight: store.commitsInFlight ?? 1,
      // Only when armed: a store that must host a hook between its write and its COMMIT (Postgres)
      // needs a second round trip per commit for it.
      ...(crashPointArmed("mid-group-commit")
        ? { beforeCommit: (units: Unit[]) => crashPoint("mid-group-commit", units.flatMap((u) => u.flatMap((m) => m.steps?.map((s) => s.stepId) ?? []))) }
        : {}),
    });
  }

  /**
   * This worker's identity in leases. It changes when the worker loses its presence in a shared
   * store (its liveness connection dropped): runs of the old identity may be taken over at once.
   */
  get owner(): Owner {
    return this.ownerNow;
  }

  /** Restricts claims to these runs (a foreground follow of one run tree). */
  setRunIds(ids: readonly string[]): void {
    const grew = !this.runIds || ids.some((id) => !this.runIds?.includes(id));
    this.runIds = ids;
    if (grew) this.kick();
  }

  /** An "error" event with no listener would throw inside the poll loop: warn instead. */
  private report(e: unknown): void {
    if (this.listenerCount("error") > 0) this.emit("error", e);
    else process.emitWarning(`stead worker ${this.owner.workerId}: ${e instanceof Error ? e.message : String(e)}`);
  }

  /** Runs currently executing in this worker. */
  get inFlight(): number {
    return this.active.size;
  }

  get commitStats(): { transactions: number; units: number } {
    return this.committer.stats;
  }

  start(): this {
    if (!this.life.is("initialized")) return this;
    this.life.move({ kind: "running" });
    this.storage.prepare().catch((e: unknown) => this.report(e));
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), this.heartbeatMs);
    // A write through this store object that makes a run claimable (a server's approval in this
    // process) claims at once; other processes' writes reach a private store's worker at its poll.
    this.unhearWakes = this.store.onWake?.(() => this.kick());
    this.announcer?.beat(this.ownerNow);
    if (this.store.attachWorker) void this.attach();
    else this.kick();
    return this;
  }

  /**
   * Registers presence in a shared store before any claim, with bounded backoff while the store
   * is unreachable. When presence is lost, every run of this identity may be taken over at once,
   * so their executions end now, and the worker comes back under a new identity.
   */
  private async attach(): Promise<void> {
    for (let attempt = 0; this.life.claims; attempt++) {
      try {
        const a = await this.store.attachWorker?.(this.ownerNow.workerId, () => this.kick());
        if (!a) return;
        if (!this.life.claims) {
          await a.detach();
          return;
        }
        this.attachment = a;
        void a.lost.then(() => this.presenceLost(a));
        this.kick();
        return;
      } catch (e) {
        this.report(e);
        await new Promise((r) => setTimeout(r, Math.min(5000, 100 * 2 ** attempt)));
      }
    }
  }

  private presenceLost(a: WorkerAttachment): void {
    if (this.attachment !== a || !this.life.claims) return;
    this.attachment = undefined;
    this.loop.cancel();
    for (const x of this.active.values()) x.exec.abort("lease-lost");
    this.ownerNow = newOwner();
    void this.attach();
  }

  /** Whether this worker may claim: always with a private store; with a shared one, only while its presence is registered. */
  private present(): boolean {
    return !this.store.attachWorker || this.attachment !== undefined;
  }

  /** Claims again soon (a run of ours finished and may have woken its parent, or an answer arrived). */
  kick(): void {
    // With a shared store, never claim before presence is registered (ClaimLoop checks `present`).
    this.loop.kick();
  }

  /** One pass of the claim loop: storage probe, sweeps, then claims for the free slots. */
  private async tick(): Promise<void> {
    try {
      // Its faults are reported, never let stop the rest of the tick.
      await this.storage.tick().catch((e: unknown) => {
        this.storeFailed(e);
        this.report(e);
      });
      if (this.options.sweep !== false && !this.storage.paused) {
        await wakeDueTimers(this.store, Date.now());
        await expireDeadOwners(this.store, this.owner.host);
        if (this.store.expireGoneOwners) await this.store.expireGoneOwners();
        // An erase a reader kept a gc from finishing (SQLite): done here once no one reads from before it.
        if (this.store.finishErase) await this.store.finishErase();
        if (Date.now() >= this.keysPrunedAt + KEY_PRUNE_MS) {
          this.keysPrunedAt = Date.now();
          await this.store.pruneIdempotencyKeys();
          await this.store.pruneAnnouncements(ANNOUNCEMENT_RETENTION_MS, Date.now());
        }
        this.retain();
      }
      const free = this.concurrency - this.active.size;
      // Presence may be lost while this tick waits on the store (a database restart): a claim
      // under an identity whose liveness lock is not held is judged gone by every worker at once.
      const owner = this.ownerNow;
      if (free > 0 && this.life.claims && this.present() && !this.storage.paused) {
        const runIds = this.options.restoreHooks?.length ? await this.restoreFirst(free) : this.runIds;
        const sent = stamp();
        const claimed =
          runIds && runIds.length === 0
            ? []
            : await this.store.claim({
                owner,
                definitions: [...this.byName.keys()],
                limit: free,
                leaseMs: this.leaseMs,
                now: Date.now(),
                ...(runIds ? { runIds } : {}),
              });
        if (claimed.length > 0) crashPoint("after-claim", []);
        // Claimed under an identity lost meanwhile: its leases are a gone owner's, taken over by the sweep.
        if (owner === this.ownerNow) for (const c of claimed) this.execute(c, sent);
        this.hookReports.clear();
      }
    } catch (e) {
      this.storeFailed(e);
      this.report(e);
    }
  }

  /** Retention (finished runs, then workspace snapshots and blobs), in the background (it may read many trees): never two at once. */
  private retain(): void {
    const r = this.options.workspace?.retention;
    const runs = this.options.retention;
    if ((!r && !runs) || this.gcPass || Date.now() < this.gcDueAt) return;
    this.gcDueAt = Date.now() + (r?.everyMs ?? runs?.everyMs ?? 3_600_000);
    const pass = async () => {
      if (runs) await deleteFinishedRuns(this.store, runs);
      if (r) await gcWorkspaces(this.store, { keepSteps: r.keepSteps, ...(r.graceMs !== undefined ? { graceMs: r.graceMs } : {}) });
    };
    this.gcPass = pass()
      .then(
        () => undefined,
        (e: unknown) => this.report(e),
      )
      .finally(() => (this.gcPass = undefined));
  }

  /**
   * Runs the restore hooks of the runs a claim would take that resume (claimed before), and
   * returns the ids that may be claimed: fresh runs, and resumed runs whose hooks all passed.
   * A failed hook leaves its run untouched (no claim, no event) and backs it off.
   */
  private async restoreFirst(limit: number): Promise<string[]> {
    const hooks = this.options.restoreHooks ?? [];
    const now = Date.now();
    // Runs backing off still come first in claim order: look past them, or they would take every slot.
    const candidates = await this.store.claimable({ definitions: [...this.byName.keys()], limit: limit + this.hookBackoff.size, now, ...(this.runIds ? { runIds: this.runIds } : {}) });
    // Backoffs of runs no claim took for a minute past their backoff (ended, taken elsewhere) are forgotten.
    const present = new Set(candidates.map((c) => c.run.id));
    for (const [id, b] of this.hookBackoff) if (!present.has(id) && b.until < now - 60_000) this.hookBackoff.delete(id);
    const ok: string[] = [];
    for (const c of candidates) {
      if (ok.length >= limit) break;
      const id = c.run.id;
      const backoff = this.hookBackoff.get(id);
      if (backoff && backoff.until > now) continue;
      if (c.run.fence === 0) {
        ok.push(id);
        continue;
      }
      try {
        this.hookReports.set(id, await runRestoreHooks(hooks, checkpointOf(c), this.options.restoreHookTimeoutMs ?? DEFAULT_RESTORE_HOOK_TIMEOUT_MS));
        this.hookBackoff.delete(id);
        ok.push(id);
      } catch (e) {
        const failures = (backoff?.failures ?? 0) + 1;
        this.hookBackoff.set(id, { until: Date.now() + Math.min(60_000, 500 * 2 ** (failures - 1)), failures });
        this.report(e);
      }
    }
    return ok;
  }

  private readonly secret = (name: string): string => {
    const value = readSecret(name, this.options.secretSource ?? ((n) => process.env[n]));
    this.options.redactor?.add(`secret:${name}`, value, `ctx.secret("${name}")`);
    return value;
  };

  private execute(claimed: ClaimedRun, sent: LeaseStamp): void {
    const def = this.byName.get(claimed.run.definition);
    if (!def) return;
    const hooks = this.hookReports.get(claimed.run.id);
    this.hookReports.delete(claimed.run.id);
    const meta = this.options.checkpointMetadata;
    const redact = this.options.redact ?? redactSecrets;
    const exec: Execution = new Execution(claimed, def, {
      owner: this.owner,
      commit: (unit) => {
        const sent = performance.now();
        return this.committer.commit(unit).then(
          (r) => {
            this.emit("committed", claimed.run.id, performance.now() - sent);
            return r;
          },
          (e: unknown) => {
            this.storeFailed(e);
            throw e;
          },
        );
      },
      payloadLimit: this.options.payloadLimitBytes ?? DEFAULT_PAYLOAD_LIMIT,
      maxLostClaims: this.options.maxLostClaims ?? 3,
      store: this.store,
      ...(this.options.workspace ? { workspace: this.options.workspace } : {}),
      ...(meta ? { checkpoint: () => encodeCheckpoint(meta(), redact, claimed.run.id) } : {}),
      ...(hooks ? { resumed: { hooks } } : {}),
      checkLease: (): true | Promise<boolean> => this.checkLease(claimed.run.id, exec),
      secret: this.secret,
      // Not only while the redactor is active: a ctx.secret read while the call streams joins it.
      redactStream: () => (this.options.redactor ? new StreamRedactor(this.options.redactor) : UNREDACTED_STREAM),
    });
    // A worker that stalled past its own lease may reclaim its own run: the older execution is
    // fenced out already, so end it, and let only the newest one own the run's slot.
    this.active.get(claimed.run.id)?.exec.abort("lease-lost");
    this.active.set(claimed.run.id, { exec, renewed: sent });
    this.emit("claimed", claimed.run.id, claimed.previousStatus);
    void exec.start().then((outcome) => {
      if (this.active.get(claimed.run.id)?.exec === exec) this.active.delete(claimed.run.id);
      if (outcome.kind === "storage") this.storage.handBack(claimed.run.id, exec.fence);
      this.emit("outcome", claimed.run.id, outcome);
      this.kick();
    });
  }

  private async heartbeat(): Promise<void> {
    // Checked at every beat, not only when a renewal fails: a renewal on a connection that went
    // silent may hang long past the lease.
    this.abortStale();
    // Its own write, never awaited here: a slow one must not delay the renewal of leases.
    if (!this.storage.paused) this.announcer?.beat(this.ownerNow);
    const handedBack = this.storage.leases();
    if ((this.active.size === 0 && handedBack.length === 0) || this.renewing) return;
    this.renewing = true;
    const leases = [...[...this.active.values()].map((a) => ({ runId: a.exec.runId, fence: a.exec.fence })), ...handedBack];
    const sent = stamp();
    try {
      const renewed = new Set(await this.store.renewLeases(this.owner.workerId, leases, this.leaseMs, sent.wall));
      for (const [runId, a] of this.active) {
        if (renewed.has(runId)) a.renewed = sent;
        else if (leases.some((l) => l.runId === runId && l.fence === a.exec.fence)) a.exec.abort("lease-lost");
      }
      for (const l of handedBack) if (!renewed.has(l.runId)) this.storage.forget(l.runId);
    } catch (e) {
      this.storeFailed(e);
      this.report(e);
      this.abortStale();
    } finally {
      this.renewing = false;
    }
  }

  /** Stops runs whose lease was not renewed for 3/4 of its length: past expiry another worker may own them. */
  private abortStale(): void {
    for (const a of this.active.values()) {
      if (since(a.renewed) >= this.leaseMs * 0.75) a.exec.abort("lease-lost");
    }
  }

  /** The execution's question before a step (ExecutionDeps.checkLease). */
  private checkLease(runId: string, exec: Execution): true | Promise<boolean> {
    const a = this.active.get(runId);
    if (!a || a.exec !== exec) return Promise.resolve(false);
    // No step starts while the store cannot write: its outcome could not be recorded.
    if (this.storage.paused) {
      exec.abort("storage", "the store cannot write");
      return Promise.resolve(false);
    }
    if (since(a.renewed) < this.leaseMs * FRESH_SHARE) return true;
    a.renewal ??= this.renewNow(a).finally(() => (a.renewal = undefined));
    return a.renewal;
  }

  /**
   * Renews one lease at once; a lease the store no longer gives this worker ends the execution.
   *
   * Hazard: a renewal's answer proves the lease only until its send time plus the lease's length.
   * A worker frozen while the renewal was in flight wakes to a yes that may be long stale, with
   * another worker past the step by now; so an answer that took half a lease or more is asked
   * again, and one that keeps coming back that late ends the execution as lost.
   */
  private async renewNow(a: Active): Promise<boolean> {
    for (let tries = 0; tries < RENEW_TRIES; tries++) {
      const sent = stamp();
      try {
        const renewed = await this.store.renewLeases(this.owner.workerId, [{ runId: a.exec.runId, fence: a.exec.fence }], this.leaseMs, sent.wall);
        if (!renewed.includes(a.exec.runId)) break;
        crashPoint("after-renewal", []);
        a.renewed = sent;
        if (since(sent) < this.leaseMs * FRESH_SHARE) return true;
      } catch (e) {
        this.storeFailed(e);
        this.report(e);
        if (isStorageFull(e)) {
          a.exec.abort("storage", e instanceof Error ? e.message : String(e));
          return false;
        }
        break;
      }
    }
    // Not renewed, or not known to be: the run may be another worker's now, so no user code runs.
    a.exec.abort("lease-lost");
    return false;
  }

  /** Reacts to a store fault seen anywhere in the worker: a full store pauses it, a lost one ends it. */
  private storeFailed(e: unknown): void {
    if (isStorageFull(e)) this.storage.onFull(e);
    else if (isStoreLost(e)) this.fail(e);
  }

  /**
   * The store is gone (deleted or replaced under this process): nothing it writes from now on
   * would ever be read, so every run stops here without writing and the worker ends for good.
   */
  private fail(e: unknown): void {
    if (this.life.ended) return;
    this.life.move({ kind: "failed", error: e });
    this.unhearWakes?.();
    this.loop.cancel();
    clearInterval(this.heartbeatTimer);
    this.announcer?.close();
    for (const a of this.active.values()) a.exec.abort("aborted", e instanceof Error ? e.message : String(e));
    void this.attachment?.detach();
    this.attachment = undefined;
    this.emit("fatal", e);
  }

  /**
   * Graceful stop: claims nothing more; running steps may finish and commit within `graceMs`,
   * then each run is handed back as pending so another worker claims it at once.
   */
  async stop(options: { graceMs?: number } = {}): Promise<void> {
    if (!this.life.is("initialized") && !this.life.is("running")) return;
    this.life.move({ kind: "stopping" });
    this.unhearWakes?.();
    this.loop.cancel();
    // It claims nothing more, so it serves no one: withdrawn now, while its runs drain.
    const withdrawn = this.announcer?.withdraw().catch((e: unknown) => this.report(e));
    await this.loop.settled;
    await this.gcPass;
    const grace = options.graceMs ?? this.graceMs;
    this.life.moveFrom("stopping", { kind: "draining", graceMs: grace });
    const execs = [...this.active.values()].map((a) => a.exec);
    for (const e of execs) e.release();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), grace)));
    const all = Promise.all(execs.map((e) => e.finished));
    const r = await Promise.race([all, timedOut]);
    clearTimeout(timer);
    if (r === "timeout") for (const e of execs) e.abort("aborted", `worker stopped after its ${grace} ms grace period`);
    this.life.moveFrom("draining", { kind: "drained" });
    await this.storage.flush().catch((e: unknown) => this.report(e));
    clearInterval(this.heartbeatTimer);
    // Not waited for past the grace period (a store that cannot be reached): unwithdrawn, the
    // announcement lapses at its bound.
    let withdrawTimer: NodeJS.Timeout | undefined;
    await Promise.race([withdrawn, new Promise((r) => (withdrawTimer = setTimeout(r, grace)))]);
    clearTimeout(withdrawTimer);
    this.life.moveFrom("drained", { kind: "stopped", forced: false });
    await this.attachment?.detach();
    this.attachment = undefined;
  }

  /** Stops at once without writing: leases are left to expire (or to dead-owner detection). */
  abortAll(): void {
    this.unhearWakes?.();
    this.loop.cancel();
    clearInterval(this.heartbeatTimer);
    this.announcer?.close();
    if (!this.life.ended) this.life.move({ kind: "stopped", forced: true });
    for (const a of this.active.values()) a.exec.abort("aborted", "worker aborted");
    void this.attachment?.detach();
    this.attachment = undefined;
  }
}

export function describeOutcome(o: ExecutionOutcome): string {
  switch (o.kind) {
    case "failed":
      return `failed: ${o.error}`;
    case "waiting":
      return `waiting for ${o.wait}`;
    case "held":
      return `held (${o.hold}): ${o.reason}`;
    case "aborted":
      return `aborted${o.error ? `: ${o.error}` : ""}`;
    case "storage":
      return `handed back: ${o.error}`;
    default:
      return o.kind;
  }
}


const SECRET_KEY = /secret|token|password|passwd|api[-_]?key|credential|private/i;

/**
 * The default redaction of checkpoint metadata: values of keys that look secret never reach the
 * store, nor does an access token under any key.
 */
export function redactSecrets(text: string): string {
  const meta = JSON.parse(text) as Record<string, string>;
  return JSON.stringify(Object.fromEntries(Object.entries(meta).map(([k, v]) => [redactTokens(k), SECRET_KEY.test(k) ? "[redacted]" : redactTokens(v)])));
}
