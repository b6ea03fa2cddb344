import type { OutputRefField } from "../store/types.js";
import type { StreamRedaction } from "../redaction/stream-redactor.js";
import type { EventWrite, RunRow, StepKind, StepRow } from "../store/types.js";
import type { AnyDefinition, Recovery, StepInfo, StepOptions, WorkflowContext, WorkflowDefinition } from "./context-types.js";

/**
 * The engine port: what an execution offers a definition whose body needs more than the public
 * `ctx` (the agent loop: journal kinds of its own, live events, quota parks, a session's earlier
 * turns). Not public API.
 *
 * Invariants:
 * - The engine hands a port only to a *ported body* (see `portedDefinition`), as an explicit
 *   argument, one port per execution; the user-visible `ctx` never carries it.
 * - Every method writes under the execution's lease and fence, exactly as `ctx` does: a port does
 *   not widen what may be written, only which journal kinds and events.
 * - After the execution ends (`signal` aborted) its calls return promises that never settle, like
 *   `ctx`'s: no user code is resumed by a dead execution.
 */
export interface EnginePort {
  readonly run: RunRow;
  readonly recovery: Recovery;
  /** Aborted when this execution ends for any reason (lease lost, shutdown, finished). */
  readonly signal: AbortSignal;
  /** The ceiling of every stored payload, in bytes. */
  readonly payloadLimit: number;
  step<T>(id: string, options: EngineStepOptions<T>, fn: (info: StepInfo) => Promise<T> | T): Promise<T>;
  /** Parks the run in a `quota` wait until `wakeAt` (the sweeper wakes it); returns after the wake. */
  quotaPark(id: string, wakeAt: number, request: unknown): Promise<void>;
  /**
   * Resolves once this execution's lease is known to be held now (renewed first when it is older
   * than half its length); never settles when it is not (the execution has ended). Asked before
   * user code that no step start checks: an agent's `init`, a model call's later tries.
   */
  leaseHeld(): Promise<void>;
  /** Writes events under the lease (live progress: not journal rows); resolves when durable. */
  emit(events: EventWrite[]): Promise<void>;
  /** Earlier turns of this run's session, ordered by turn, with their journals (empty without a session). */
  earlierTurns(): Promise<{ run: RunRow; journal: StepRow[] }[]>;
  /**
   * Stores the run's output with `refs`' fields held by journaled steps instead of stored again
   * (see output-refs.ts); a parent still receives the value the body returns, whole. A port's
   * caller from a release before `refs` passed the value with in-band references, stored as it was.
   */
  storeOutputAs(stored: unknown, refs?: readonly OutputRefField[]): void;
  /**
   * Parks on an approval of an agent's tool call, as `ctx.approval` does, its request's kind
   * recorded as "tool-call" (decisions on it may carry edited arguments and scope). Absent on
   * ports of releases before it.
   */
  toolApproval?(name: string, request: unknown): Promise<unknown>;
  /** The engine records a step's error outcome (EngineStepOptions.errorOutcome). Absent on ports of releases before it, which ignore that option. */
  readonly errorOutcomes?: true;
  /**
   * A new redaction of one stream of live text (a model call's text as it streams): every piece
   * goes through it before it is written as an event or shown, so a secret split across pieces is
   * redacted as in the whole text. Absent on ports of releases before it.
   */
  redactStream?(): StreamRedaction;
}

export interface EngineStepOptions<T> extends StepOptions<T> {
  /** The journal kind recorded for the step (default "step", or "effect" with `effect: true`). */
  kind?: Extract<StepKind, "model" | "tool">;
  /**
   * Live events of this step's attempt (e.g. `model.delta`, written while it runs) that its
   * journaled outcome replaces: deleted in the same write as the outcome, where `marker` is written
   * instead, so a follower learns to read the outcome in their place. A cut-off attempt keeps them.
   */
  compacts?: { type: "model.delta"; marker: (attempt: number) => EventWrite };
  /**
   * For a step whose failures can be outcomes (an agent's tool call, whose error the model is
   * told): given why the step failed — its function threw (`"function"`), or its value cannot be
   * stored (`"storing"`: too large, too deep, not JSON) — the message to record as the step's
   * *error outcome*, or undefined to fail the step as any other. An error outcome completes the
   * step with the message as its error (no output); live and on replay the step throws a
   * StepFailedError with code ERROR_OUTCOME and that message.
   */
  errorOutcome?: (failure: unknown, where: "function" | "storing") => string | undefined;
}

/** The body of a definition that runs on the engine port. */
export type PortedBody<I, O> = (ctx: WorkflowContext, input: I, port: EnginePort) => Promise<O>;

/**
 * Keys a definition's ported body. Registered (`Symbol.for`) because the engine that executes a
 * definition may come from another copy of this package than the one that made it (a CLI loading
 * a user's module); what crosses between copies is this key and the `EnginePort` shape.
 */
const PORTED = Symbol.for("stead.ported-body");

/**
 * Makes `def` a definition the engine runs as `body(ctx, input, port)` instead of `def.fn`. For
 * the package's own kinds (agent()); not exported from the package. The definition's public `fn`
 * refuses to run: without an execution there is no port to give the body.
 */
export function portedDefinition<I, O, D extends WorkflowDefinition<I, O>>(def: Omit<D, "fn">, body: PortedBody<I, O>, refusal: () => Error): D {
  const made = {
    ...def,
    fn: (): Promise<O> => Promise.reject(refusal()),
  } as unknown as D;
  // Enumerable, like DEFINITION: a spread copy of a definition (`{ ...myAgent }`) keeps its body.
  Object.defineProperty(made, PORTED, { value: body, enumerable: true });
  return made;
}

/** The ported body of `def`, or undefined for a plain workflow (run as `def.fn(ctx, input)`). */
export function portedBody(def: AnyDefinition): PortedBody<unknown, unknown> | undefined {
  const body = (def as unknown as Record<symbol, unknown>)[PORTED];
  return typeof body === "function" ? (body as PortedBody<unknown, unknown>) : undefined;
}
