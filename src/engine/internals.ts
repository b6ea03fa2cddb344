import type { EventWrite, RunRow, StepKind, StepRow } from "../store/types.js";
import type { StepInfo, StepOptions, WorkflowContext } from "./context-types.js";

/**
 * What the agent layer needs from an execution beyond the public `ctx`. Reached through
 * `engineOf(ctx)`; not part of the public API.
 */
export const ENGINE = Symbol.for("stead.engine");

/** Why this execution exists: the first process of the run, or a replacement. */
export type Recovery =
  | { kind: "initial" }
  | {
      kind: "resumed";
      /** "crash": the previous worker stopped renewing its lease; "continued": after a wait, a hold release or a graceful hand-off. */
      reason: "crash" | "continued";
    };

export interface EngineStepOptions<T> extends StepOptions<T> {
  /** The journal kind recorded for the step (default "step", or "effect" with `effect: true`). */
  kind?: Extract<StepKind, "model" | "tool">;
  /**
   * Live events of this step's attempt (e.g. `model.delta`, written while it runs) that its
   * journaled outcome replaces: deleted in the same write as the outcome, where `marker` is written
   * instead, so a follower learns to read the outcome in their place. A cut-off attempt keeps them.
   */
  compacts?: { type: "model.delta"; marker: (attempt: number) => EventWrite };
}

export interface EngineInternals {
  readonly run: RunRow;
  readonly recovery: Recovery;
  /** Aborted when this execution ends for any reason (lease lost, shutdown, finished). */
  readonly signal: AbortSignal;
  /** The ceiling of every stored payload, in bytes. */
  readonly payloadLimit: number;
  step<T>(id: string, options: EngineStepOptions<T>, fn: (info: StepInfo) => Promise<T> | T): Promise<T>;
  /** Parks the run in a `quota` wait until `wakeAt` (the sweeper wakes it); returns after the wake. */
  quotaPark(id: string, wakeAt: number, request: unknown): Promise<void>;
  /** Writes events under the lease (live progress: not journal rows); resolves when durable. */
  emit(events: EventWrite[]): Promise<void>;
  /** Earlier turns of this run's session, ordered by turn, with their journals (empty without a session). */
  earlierTurns(): Promise<{ run: RunRow; journal: StepRow[] }[]>;
  /**
   * Stores the run's output as `stored` instead of the value the function returns (which a parent
   * still receives whole): fields of it may be output references (see output-refs.ts) to what a
   * journaled step holds already, so nothing is stored twice.
   */
  storeOutputAs(stored: unknown): void;
}

export function engineOf(ctx: WorkflowContext): EngineInternals {
  const x = (ctx as unknown as Record<symbol, EngineInternals | undefined>)[ENGINE];
  if (!x) throw new Error("internal: this ctx was not made by a Stead execution");
  return x;
}
