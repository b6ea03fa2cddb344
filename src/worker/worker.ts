import { EventEmitter } from "node:events";
import { crashPoint } from "../engine/crash-points.js";
import type { AnyDefinition } from "../engine/definitions/definition.js";
import { DEFAULT_PAYLOAD_LIMIT } from "../engine/payload.js";
import { DEFAULT_HEADROOM_BYTES, isStorageFull, isStoreLost } from "../store/faults.js";
import type { ClaimedRun, Owner, Store } from "../store/types.js";
import { Announcer, announcementBound, announcementsOf } from "./announcer.js";
import { ClaimLoop } from "./claim-loop.js";
import { Executions } from "./execution-deps.js";
import { Housekeeping } from "./housekeeping.js";
import { LeaseKeeper, stamp, type LeaseStamp } from "./lease-keeping.js";
import { Presence } from "./presence.js";
import { DEFAULT_RESTORE_HOOK_TIMEOUT_MS, RestoreGate } from "./restore-gate.js";
import { StorageGuard } from "./storage-guard.js";
import { definitionsByName, type WorkerEvents, type WorkerOptions } from "./worker-options.js";
import { WorkerLifecycle } from "./worker-state.js";

export type { WorkerEvents, WorkerOptions } from "./worker-options.js";

/**
 * A worker claims runnable runs under leases and executes them. It moves its state
 * (worker-state.ts) through its transitions and wires its parts: lease keeping, housekeeping, the
 * restore gate, presence, the storage guard, the announcer, the claim loop, each execution's deps.
 */
export class Worker extends EventEmitter<WorkerEvents> {
  private readonly executions: Executions;
  private readonly byName: Map<string, AnyDefinition>;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly graceMs: number;
  private readonly loop: ClaimLoop;
  /** Its states and their transitions: worker-state.ts. */
  private readonly life = new WorkerLifecycle();
  private readonly storage: StorageGuard;
  private readonly leases: LeaseKeeper;
  private readonly chores: Housekeeping;
  private readonly presence: Presence;
  /** Undefined without restore hooks. */
  private readonly gate: RestoreGate | undefined;
  private runIds: readonly string[] | undefined;
  /** Ends this worker's subscription to its store's in-process wake-ups (Store.onWake). */
  private unhearWakes: (() => void) | undefined;
  /** Announces what this worker serves; undefined when it announces nothing. */
  private readonly announcer: Announcer | undefined;

  constructor(
    private readonly store: Store,
    private readonly options: WorkerOptions,
  ) {
    super();
    this.chores = new Housekeeping(store, options, () => this.owner.host, this.report);
    this.runIds = options.runIds;
    this.byName = definitionsByName(options.definitions);
    this.concurrency = Math.max(1, options.concurrency ?? 10);
    this.leaseMs = options.leaseMs ?? 30_000;
    this.loop = new ClaimLoop(
      () => this.tick(),
      options.pollMs ?? 200,
      () => this.life.claims,
      () => this.presence.present,
    );
    this.graceMs = options.graceMs ?? 30_000;
    if (options.announce ?? options.runIds === undefined) {
      const payloadLimit = options.payloadLimitBytes ?? DEFAULT_PAYLOAD_LIMIT;
      this.announcer = new Announcer(store, announcementsOf(this.byName.values(), payloadLimit), announcementBound(this.leaseMs), this.failed);
    }
    this.storage = new StorageGuard(store, {
      headroomBytes: options.storageHeadroomBytes ?? DEFAULT_HEADROOM_BYTES,
      alertMs: options.storageAlertMs ?? 30_000,
      probeMs: options.storageProbeMs ?? 1000,
      workerId: () => this.owner.workerId,
      report: (r) => this.emit("storage", r),
      onError: this.report,
    });
    this.leases = new LeaseKeeper(store, this.storage, {
      leaseMs: this.leaseMs,
      heartbeatMs: options.heartbeatMs ?? Math.max(50, Math.floor(this.leaseMs / 3)),
      workerId: () => this.owner.workerId,
      // Its own write, never awaited here: a slow one must not delay the renewal of leases.
      onBeat: () => {
        if (!this.storage.paused) this.announcer?.beat(this.owner);
      },
      onError: this.failed,
    });
    this.presence = new Presence(store, {
      claims: () => this.life.claims,
      kick: () => this.kick(),
      lost: () => {
        this.loop.cancel();
        this.leases.abortAll("lease-lost");
      },
      onError: this.report,
    });
    if (options.restoreHooks?.length) this.gate = new RestoreGate(store, options.restoreHooks, options.restoreHookTimeoutMs ?? DEFAULT_RESTORE_HOOK_TIMEOUT_MS, this.report);
    this.executions = new Executions(store, options, {
      committed: (runId, ms) => this.emit("committed", runId, ms),
      commitFailed: (e) => this.storeFailed(e),
      checkLease: (exec) => this.leases.check(exec),
    });
  }

  /** This worker's identity in leases (presence.ts: it changes when presence in a shared store is lost). */
  get owner(): Owner {
    return this.presence.owner;
  }

  /** Restricts claims to these runs (a foreground follow of one run tree). */
  setRunIds(ids: readonly string[]): void {
    const grew = !this.runIds || ids.some((id) => !this.runIds?.includes(id));
    this.runIds = ids;
    if (grew) this.kick();
  }

  /** An "error" event with no listener would throw inside the poll loop: warn instead. */
  private readonly report = (e: unknown): void => {
    if (this.listenerCount("error") > 0) this.emit("error", e);
    else process.emitWarning(`stead worker ${this.owner.workerId}: ${e instanceof Error ? e.message : String(e)}`);
  };

  /** Runs currently executing in this worker. */
  get inFlight(): number {
    return this.leases.size;
  }

  get commitStats(): { transactions: number; units: number } {
    return this.executions.commitStats;
  }

  start(): this {
    if (!this.life.is("initialized")) return this;
    this.life.move({ kind: "running" });
    this.storage.prepare().catch(this.report);
    this.leases.start();
    // A write through this store object that makes a run claimable (a server's approval in this
    // process) claims at once; other processes' writes reach a private store's worker at its poll.
    this.unhearWakes = this.store.onWake?.(() => this.kick());
    this.announcer?.beat(this.owner);
    if (this.presence.shared) void this.presence.attach();
    else this.kick();
    return this;
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
      await this.storage.tick().catch(this.failed);
      if (this.options.sweep !== false && !this.storage.paused) await this.chores.sweep();
      const free = this.concurrency - this.leases.size;
      // Presence may be lost while this tick waits on the store (a database restart): a claim
      // under an identity whose liveness lock is not held is judged gone by every worker at once.
      const owner = this.owner;
      if (free > 0 && this.life.claims && this.presence.present && !this.storage.paused) {
        const definitions = [...this.byName.keys()];
        const runIds = this.gate ? await this.gate.pass(free, definitions, this.runIds) : this.runIds;
        const sent = stamp();
        const claimed =
          runIds && runIds.length === 0
            ? []
            : await this.store.claim({
                owner,
                definitions,
                limit: free,
                leaseMs: this.leaseMs,
                now: Date.now(),
                ...(runIds ? { runIds } : {}),
              });
        if (claimed.length > 0) crashPoint("after-claim", []);
        // Claimed under an identity lost meanwhile: its leases are a gone owner's, taken over by the sweep.
        if (owner === this.owner) for (const c of claimed) this.execute(c, sent);
        this.gate?.clear();
      }
    } catch (e) {
      this.failed(e);
    }
  }

  private execute(claimed: ClaimedRun, sent: LeaseStamp): void {
    const def = this.byName.get(claimed.run.definition);
    if (!def) return;
    const exec = this.executions.create(claimed, def, this.owner, this.gate?.take(claimed.run.id));
    this.leases.hold(exec, sent);
    this.emit("claimed", claimed.run.id, claimed.previousStatus);
    void exec.start().then((outcome) => {
      this.leases.letGo(exec);
      if (outcome.kind === "storage") this.storage.handBack(claimed.run.id, exec.fence);
      this.emit("outcome", claimed.run.id, outcome);
      this.kick();
    });
  }

  private readonly failed = (e: unknown): void => {
    this.storeFailed(e);
    this.report(e);
  };

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
    this.leases.stop();
    this.announcer?.close();
    this.leases.abortAll("aborted", e instanceof Error ? e.message : String(e));
    void this.presence.detach();
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
    const withdrawn = this.announcer?.withdraw().catch(this.report);
    await this.loop.settled;
    await this.chores.settled;
    const grace = options.graceMs ?? this.graceMs;
    this.life.moveFrom("stopping", { kind: "draining", graceMs: grace });
    const execs = this.leases.executions();
    for (const e of execs) e.release();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), grace)));
    const all = Promise.all(execs.map((e) => e.finished));
    const r = await Promise.race([all, timedOut]);
    clearTimeout(timer);
    if (r === "timeout") for (const e of execs) e.abort("aborted", `worker stopped after its ${grace} ms grace period`);
    this.life.moveFrom("draining", { kind: "drained" });
    await this.storage.flush().catch(this.report);
    this.leases.stop();
    // Not waited for past the grace period (a store that cannot be reached): unwithdrawn, the
    // announcement lapses at its bound.
    let withdrawTimer: NodeJS.Timeout | undefined;
    await Promise.race([withdrawn, new Promise((r) => (withdrawTimer = setTimeout(r, grace)))]);
    clearTimeout(withdrawTimer);
    this.life.moveFrom("drained", { kind: "stopped", forced: false });
    await this.presence.detach();
  }

  /** Stops at once without writing: leases are left to expire (or to dead-owner detection). */
  abortAll(): void {
    this.unhearWakes?.();
    this.loop.cancel();
    this.leases.stop();
    this.announcer?.close();
    if (!this.life.ended) this.life.move({ kind: "stopped", forced: true });
    this.leases.abortAll("aborted", "worker aborted");
    void this.presence.detach();
  }
}
