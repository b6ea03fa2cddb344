import { checkTransition, type TransitionTable } from "../engine/runs/transitions.js";

/**
 * The lifecycle of a worker, in the words of Temporal's worker (INITIALIZED, RUNNING, STOPPING,
 * DRAINING, DRAINED, STOPPED, FAILED), as this worker lives it.
 *
 * Not lifecycle states, because no transition depends on them:
 * - Presence in a shared store (presence.ts): it comes and goes while running (a
 *   database restart) and only says whether a claim may be made now.
 * - A full store (storage-guard.ts): while running, the guard pauses claims, sweeps and new steps,
 *   and lifts the pause by itself when a probe finds room; a paused worker stops, fails or is
 *   aborted exactly as a running one.
 * - The claim loop's tick in progress and a kick during it (claim-loop.ts), and the heartbeat's
 *   renewal in flight (lease-keeping.ts `renewing`): re-entrancy guards of two loops. The claim loop runs
 *   only while `claims` holds; the heartbeat from start() until the worker is stopped or failed,
 *   through stopping, draining and drained, so no lease lapses while runs are handed back.
 */
export type WorkerState =
  /** Constructed; start() not called. Nothing is claimed or renewed. */
  | { kind: "initialized" }
  /** Claims (while present and the store can write), renews its leases, sweeps. */
  | { kind: "running" }
  /** stop() called: no new claim; waiting for the tick and the retention pass in progress to finish. */
  | { kind: "stopping" }
  /** Every execution was asked to hand its run back: in-flight steps may commit within `graceMs`. Leases are still renewed. */
  | { kind: "draining"; graceMs: number }
  /** Every execution has ended (or was aborted at the end of the grace): runs handed back on a full store are flushed, leases still renewed. */
  | { kind: "drained" }
  /** Terminal. `forced`: by abortAll(), which writes nothing and leaves leases to expire. */
  | { kind: "stopped"; forced: boolean }
  /** Terminal. The store was lost (deleted or replaced): every execution was aborted without writing. */
  | { kind: "failed"; error: unknown };

export type WorkerStateKind = WorkerState["kind"];

/**
 * Every allowed transition, with the reason it exists. Anything else is a bug and `move` throws.
 * Asks that find the worker already ended are not transitions and are dropped by their callers:
 * start() after start, stop() once stopping or ended, a store loss after the end. abortAll() and
 * the store's loss may land in the middle of a graceful stop; the stop then finishes its work
 * (it writes nothing a forced stop would not) without moving the state again.
 */
export const WORKER_TRANSITIONS: TransitionTable<WorkerStateKind> = {
  initialized: {
    running: "start()",
    stopping: "stop() before start(): it finds nothing to drain and ends stopped",
    stopped: "abortAll() before start()",
  },
  running: {
    stopping: "stop(): graceful",
    stopped: "abortAll(): forced, every execution aborted at once",
    failed: "the store was lost",
  },
  stopping: {
    draining: "the tick and the retention pass in progress finished; every execution was asked to release its run",
    stopped: "abortAll() during the stop",
    failed: "the store was lost during the stop (the last tick saw it)",
  },
  draining: {
    drained: "every execution ended, or the grace ran out and the rest were aborted",
    stopped: "abortAll() during the grace",
    failed: "the store was lost while steps were committing",
  },
  drained: {
    stopped: "the hand-backs were flushed and the heartbeat stopped (graceful), or abortAll() during the flush (forced)",
    failed: "the store was lost during the flush (a lease renewal saw it)",
  },
  stopped: {},
  failed: {},
};

const INITIALIZED: WorkerState = { kind: "initialized" };

/** The one place a worker's state changes. */
export class WorkerLifecycle {
  private state: WorkerState = INITIALIZED;

  get current(): WorkerState {
    return this.state;
  }

  is(kind: WorkerStateKind): boolean {
    return this.state.kind === kind;
  }

  /** Whether the claim loop and presence registration may run. */
  get claims(): boolean {
    return this.state.kind === "running";
  }

  /** Whether stopped or failed: nothing is renewed, claimed or written any more. */
  get ended(): boolean {
    return this.state.kind === "stopped" || this.state.kind === "failed";
  }

  /** Throws an internal error on a transition the table does not list. */
  move(to: WorkerState): void {
    checkTransition(WORKER_TRANSITIONS, "a worker", this.state.kind, to.kind);
    this.state = to;
  }

  /** Moves only if the state is still `from`: a forced stop or the store's loss may have ended the worker meanwhile. */
  moveFrom(from: WorkerStateKind, to: WorkerState): boolean {
    if (this.state.kind !== from) return false;
    this.move(to);
    return true;
  }
}
