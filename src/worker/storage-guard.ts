import { errorMessage } from "../errors.js";
import type { Commits, RunReads, StorageCheck, StorageReserve, StorageRoom, Store, Unit } from "../store/types.js";
import { storageSince } from "../engine/runs/holds.js";
import { bytesText, type StorageSpace } from "../engine/runs/storage-space.js";

/** What a worker tells people about the store's room to write (on stderr from `stead worker`). */
export type StorageReport =
  | { state: "full"; since: number; error: string }
  /** `needBytes`, `freeBytes`: what the last probe asked for and found (see StorageSpace). */
  | ({ state: "still-full"; since: number; error: string; heldRuns: number } & StorageSpace)
  | { state: "recovered"; since: number; at: number; resumedRuns: number; detail: string };

export interface StorageGuardOptions {
  /** Room a probe must find before runs continue, in bytes. */
  headroomBytes: number;
  /** How long the store stays full before a `storage.full` event is written for each affected run. */
  alertMs: number;
  /** How often a full store is probed for room. */
  probeMs: number;
  workerId: () => string;
  report: (r: StorageReport) => void;
  /** Errors that are neither a full store nor expected (reported, never thrown). */
  onError: (e: unknown) => void;
}

/**
 * The `storage` hold, as one worker lives it.
 *
 * Where the state lives while the store cannot write: in this worker's memory (since when, the
 * error, the runs it must hand back) and on stderr; it reaches the store as soon as a write gets
 * through: each affected run held `storage` (one small write each, tried at once and again at every
 * probe), a `storage.full` event after `alertMs`, and on recovery the holds' release. Any worker
 * that finds open `storage` holds pauses its claims until a probe finds room, then releases them,
 * so the state is shared through the store, not through this process.
 *
 * Invariants:
 * - While the store is full, no claim is made and no step starts (the worker's lease check says
 *   no); an execution whose write failed ends at once and its run is handed back here.
 * - A handed-back run keeps this worker's lease (renewed with the others) until it is held or
 *   released, so no other worker takes it over by expiry: a full disk is never a lost claim.
 */
/** A full store as this worker knows it; `room`: what its last probe found. */
interface Full {
  since: number;
  error: string;
  alerted: boolean;
  reported: boolean;
  room?: StorageCheck;
}

export class StorageGuard {
  private full: Full | undefined;
  /** Runs to hand back, with the fence of this worker's claim: not yet held in the store. */
  private readonly pending = new Map<string, number>();
  /** Runs this worker held `storage`, for the alert event. */
  private readonly held = new Set<string>();
  private nextProbeAt = 0;
  /** Another worker's holds seen in the store, with no room found yet: claims pause here too. */
  private sharedFull = false;
  private nextSharedCheck = 0;

  constructor(
    private readonly store: Commits & RunReads & Partial<StorageReserve> & StorageRoom,
    private readonly options: StorageGuardOptions,
  ) {}

  /** Claims and new steps wait while this is true. */
  get paused(): boolean {
    return this.full !== undefined || this.sharedFull;
  }

  /** A write failed for lack of space. */
  onFull(e: unknown): void {
    if (this.full) return;
    this.full = { since: Date.now(), error: errorMessage(e), alerted: false, reported: false };
    this.nextProbeAt = 0;
    this.options.report({ state: "full", since: this.full.since, error: this.full.error });
    // Room for the holds that tell people why their runs stopped.
    this.store.releaseReserve?.().catch((err: unknown) => this.options.onError(err));
  }

  /**
   * An execution ended because of the full store: its run is held (or handed back) from here. A
   * run stopped because another worker's holds say the store is full (or whose outcome arrived
   * after recovery) puts this worker in the full state too, so only whileFull() owns handed-back runs.
   */
  handBack(runId: string, fence: number): void {
    this.pending.set(runId, fence);
    if (!this.full) this.onFull(new Error("the store cannot write: other runs are held storage and no room was found"));
  }

  /** A stopping worker's last try to hold the runs it handed back (so nobody counts them as lost claims). */
  async flush(): Promise<void> {
    if (this.full) await this.holdPending(this.full);
  }

  /** Leases this worker keeps while it hands their runs back. */
  leases(): { runId: string; fence: number }[] {
    return [...this.pending].map(([runId, fence]) => ({ runId, fence }));
  }

  /** A renewal no longer returned this run: another worker owns it; nothing to hand back. */
  forget(runId: string): void {
    this.pending.delete(runId);
  }

  /** Sets the reserve aside (see Store.releaseReserve) if it is missing: a worker starting on a store without one. */
  async prepare(): Promise<void> {
    await this.store.restoreReserve?.();
  }

  /** Called at every worker tick: hands runs back, probes for room, releases holds once it is found. */
  async tick(now = Date.now()): Promise<void> {
    if (this.full) return this.whileFull(now);
    if (now < this.nextSharedCheck) return;
    this.nextSharedCheck = now + this.options.probeMs;
    const holds = await this.store.holds({ status: "open", kind: "storage" });
    if (holds.length === 0) {
      this.sharedFull = false;
      return;
    }
    let room;
    try {
      room = await this.store.checkStorage(this.options.headroomBytes);
    } catch (e) {
      // A probe that cannot run says nothing about room: claims stay paused, and it is reported.
      this.sharedFull = true;
      this.options.onError(e);
      return;
    }
    this.sharedFull = !room.ok;
    if (!room.ok) return;
    await this.store.restoreReserve?.();
    await this.releaseHolds(holds.map((h) => ({ runId: h.runId, id: h.id, since: storageSince(h.details) ?? h.createdAt })), room.detail);
  }

  private async whileFull(now: number): Promise<void> {
    const full = this.full;
    if (!full || now < this.nextProbeAt) return;
    this.nextProbeAt = now + this.options.probeMs;
    let room;
    try {
      room = await this.store.checkStorage(this.options.headroomBytes);
    } catch (e) {
      this.options.onError(e);
      return;
    }
    if (!room.ok) {
      full.room = room;
      await this.holdPending(full);
      if (!full.alerted && now - full.since >= this.options.alertMs) await this.alert(full, now);
      return;
    }
    // Room again: runs not yet held go straight back to pending; every storage hold is released.
    const resumed = await this.releasePending(full, now);
    const holds = await this.store.holds({ status: "open", kind: "storage" });
    const released = await this.releaseHolds(holds.map((h) => ({ runId: h.runId, id: h.id, since: storageSince(h.details) ?? full.since })), room.detail);
    if (this.pending.size > 0) return;
    this.full = undefined;
    this.held.clear();
    await this.store.restoreReserve?.();
    this.options.report({ state: "recovered", since: full.since, at: Date.now(), resumedRuns: resumed + released, detail: room.detail });
  }

  /** The space the last probe waited for and found (before any probe: the headroom, free unknown). */
  private space(full: Full): StorageSpace {
    return { needBytes: full.room?.needBytes ?? this.options.headroomBytes, freeBytes: full.room?.freeBytes ?? null };
  }

  /** Tries to hold every pending run `storage` (a small write that may get through a full store). */
  private async holdPending(full: Full): Promise<void> {
    if (this.pending.size === 0) return;
    const space = this.space(full);
    const free = space.freeBytes === null ? "the free space cannot be told without writing" : `${bytesText(space.freeBytes)} free now`;
    const reason = `the store could not write since ${new Date(full.since).toISOString()} (${full.error}); the run continues by itself once ${bytesText(space.needBytes)} are free (${free})`;
    const runs = [...this.pending];
    const units: Unit[] = runs.map(([runId, fence]) => [
      {
        runId,
        expect: { lease: { fence, owner: this.options.workerId() } },
        run: { status: "held", releaseLease: true },
        holds: [{ kind: "storage", stepId: null, seq: null, reason, details: JSON.stringify({ since: full.since, error: full.error, worker: this.options.workerId(), ...space }) }],
        events: [{ type: "run.held", data: { hold: "storage", reason, step: null } }],
      },
    ]);
    const results = await this.commitQuietly(units);
    if (!results) return;
    results.forEach((r, i) => {
      const runId = runs[i]?.[0];
      if (runId === undefined) return;
      this.pending.delete(runId);
      if (r.ok) this.held.add(runId);
    });
  }

  private async releasePending(full: { since: number }, now: number): Promise<number> {
    if (this.pending.size === 0) return 0;
    const runs = [...this.pending];
    const reason = `the store could not write from ${new Date(full.since).toISOString()} to ${new Date(now).toISOString()}`;
    const units: Unit[] = runs.map(([runId, fence]) => [
      { runId, expect: { lease: { fence, owner: this.options.workerId() } }, run: { status: "pending", releaseLease: true }, events: [{ type: "run.released", data: { reason } }] },
    ]);
    const results = await this.commitQuietly(units);
    if (!results) return 0;
    let n = 0;
    results.forEach((r, i) => {
      const runId = runs[i]?.[0];
      if (runId !== undefined) this.pending.delete(runId);
      if (r.ok) n++;
    });
    return n;
  }

  private async releaseHolds(holds: { runId: string; id: number; since: number }[], detail: string): Promise<number> {
    if (holds.length === 0) return 0;
    const at = Date.now();
    const units: Unit[] = holds.map((h) => [
      {
        runId: h.runId,
        expect: { status: ["held"], openHold: h.id },
        releaseHolds: [{ id: h.id, choice: "retry", by: "stead" }],
        run: { status: "pending", lostClaims: 0 },
        events: [
          { type: "hold.released", data: { hold: "storage", id: h.id, choice: "retry", by: "stead", step: null } },
          { type: "storage.recovered", data: { since: h.since, at, detail } },
        ],
      },
    ]);
    const results = await this.commitQuietly(units);
    return results ? results.filter((r) => r.ok).length : 0;
  }

  private async alert(full: Full, now: number): Promise<void> {
    const runs = [...new Set([...this.held, ...this.pending.keys()])];
    const space = this.space(full);
    if (!full.reported) this.options.report({ state: "still-full", since: full.since, error: full.error, heldRuns: runs.length, ...space });
    full.reported = true;
    if (runs.length === 0) {
      full.alerted = true;
      return;
    }
    const units: Unit[] = runs.map((runId) => [{ runId, optional: true, events: [{ type: "storage.full", data: { since: full.since, forMs: now - full.since, error: full.error, ...space } }] }]);
    if (await this.commitQuietly(units)) full.alerted = true;
  }

  /** A write that may fail for lack of space: undefined then (tried again at the next probe). */
  private async commitQuietly(units: Unit[]): Promise<Awaited<ReturnType<Store["commit"]>> | undefined> {
    try {
      return await this.store.commit(units);
    } catch (e) {
      if ((e as { code?: unknown }).code !== "STEAD_STORAGE_FULL") this.options.onError(e);
      return undefined;
    }
  }
}
