import type { HoldKind, Mutation, StepKind, WaitOpen } from "../../store/types.js";
import type { ExecutionOutcome } from "./outcome.js";
import { checkTransition, type TransitionTable } from "../runs/transitions.js";

/** A hold an execution puts on its run: what it is, why, and the journal position it is about. */
export interface HoldFacts {
  hold: HoldKind;
  reason: string;
  facts: Record<string, unknown>;
  stepId: string | null;
  seq: number | null;
}

/** A wait the run parks in, at its journal position. */
export type ParkedWait = WaitOpen & { stepId: string; stepKind: StepKind };

/** One of the waits a run parks in: `isNew` when this write opens it; otherwise it is open already and must still be. */
export interface ParkingWait {
  wait: ParkedWait;
  isNew: boolean;
}

/** What the definition's function came to. */
export type CodeResult = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * How an execution ends, once its in-flight steps have settled: each is one fenced write
 * (see endings.ts), after which the execution is finished.
 */
export type Ending =
  /** The code returned or threw: the run completes or fails (or is held if the journal has more). */
  | { kind: "complete"; result: CodeResult }
  | { kind: "hold"; hold: HoldFacts }
  /**
   * The run parks in one or more open waits (any answer to any of them wakes it), in one write that
   * opens the new ones with the runs they start. Today's code parks at its first wait, so one.
   */
  | { kind: "park"; waits: readonly [ParkingWait, ...ParkingWait[]]; newRuns: NonNullable<Mutation["newRuns"]> }
  | { kind: "pause" }
  /** Graceful worker shutdown: the run goes back to pending for any worker. */
  | { kind: "release" };

/**
 * The lifecycle of one execution. Replay is not a state: it is per journal position (two
 * concurrent steps may be one replayed, one live, when a crash fell between their commits), so
 * the journal cursor answers it for each position and nothing here changes when the last
 * recorded position is passed. The checks before the code runs (crash loop, fingerprint,
 * workspace) are `running` too: they end the execution the same ways a step does.
 */
export type ExecutionState =
  /** Claimed: ctx calls are taken (replayed from the journal, or run live). */
  | { kind: "running" }
  /**
   * A commit came back with `pauseRequested`: no new ctx call or retry starts. The pause is
   * claimed as the ending on the next turn of the event loop, unless another ending is claimed first.
   */
  | { kind: "pause-requested" }
  /** No new ctx call starts; in-flight steps settle, then the ending's write is made. */
  | { kind: "ending"; ending: Ending }
  /** Terminal. The execution's signal is aborted and its `finished` promise resolved with `outcome`. */
  | { kind: "finished"; outcome: ExecutionOutcome };

export type ExecutionStateKind = ExecutionState["kind"];

/**
 * Every allowed transition, with the reason it exists. Anything else is a bug and `move` throws.
 * Two requests are not transitions and are dropped by their callers instead: a second ending
 * (the first claimed wins: e.g. the code returns while a pause waits for its turn), and a second
 * finish (an abort racing the ending's own write: the first outcome wins).
 */
export const EXECUTION_TRANSITIONS: TransitionTable<ExecutionStateKind> = {
  running: {
    "pause-requested": "a commit reported that a person asked to pause the run",
    ending: "the code returned or threw; a hold (crash loop, changed definition, workspace gap, replay divergence, ambiguous effect); a wait parks the run; the worker releases it on graceful shutdown",
    finished: "an abort (lease lost, forced shutdown, full store, store lost); a write refused (fence) or failed; a wait answered meanwhile (requeued)",
  },
  "pause-requested": {
    ending: "the pause on its turn, or an ending claimed before it: the code returned, an in-flight effect's reconcile held, the worker released the run",
    finished: "as from running: an abort or a refused write does not wait for the pause",
  },
  ending: {
    finished: "the ending's write committed, was refused, or failed; or an abort came before it",
  },
  finished: {},
};

const RUNNING: ExecutionState = { kind: "running" };

/** The one place an execution's state changes. */
export class Lifecycle {
  private state: ExecutionState = RUNNING;

  get current(): ExecutionState {
    return this.state;
  }

  /** Whether a new ctx call (or a retry of a step) may start. */
  get accepting(): boolean {
    return this.state.kind === "running";
  }

  /** Whether an ending may still be claimed. */
  get endable(): boolean {
    return this.state.kind === "running" || this.state.kind === "pause-requested";
  }

  get finished(): boolean {
    return this.state.kind === "finished";
  }

  /** Throws an internal error on a transition the table does not list. */
  move(to: ExecutionState): void {
    checkTransition(EXECUTION_TRANSITIONS, "an execution", this.state.kind, to.kind);
    this.state = to;
  }
}
