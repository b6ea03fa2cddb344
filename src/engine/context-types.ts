/*
 * The contract between user code and the engine: the definition and the `ctx` its function
 * receives. One file because the two are mutually recursive (a ctx starts children of definitions
 * whose function takes a ctx); a type file both sides import keeps definition.ts and the execution
 * out of a cycle.
 */

/** Marks definition objects across copies of this package (a CLI and a user module may load two). */
export const DEFINITION = Symbol.for("stead.definition");

export interface WorkflowDefinition<I = unknown, O = unknown> {
  readonly [DEFINITION]: true;
  /** "agent": made with `agent()`; its function is the agent loop (src/agent/). */
  readonly kind: "workflow" | "agent";
  readonly name: string;
  /** Absolute path of the module that called `workflow()`, when it could be told. */
  readonly module: string | null;
  readonly fn: (ctx: WorkflowContext, input: I) => Promise<O> | O;
  /** The definition's fingerprint: a hash of its module and local imports, or of `version`. */
  fingerprint(): string;
  /**
   * When a session turn of this definition was cut off by a crash: "resume" continues it from its
   * last completed step; "interrupt" ends it as interrupted (never replayed) so the session goes on.
   */
  readonly onInterrupt?: "resume" | "interrupt";
  /**
   * The input the definition declares (a workflow's `input` schema, an agent's prompt): every
   * start with the definition checks it, and workers announce its JSON Schema, against which a
   * start by name is checked. Absent: any JSON input.
   */
  readonly input?: DeclaredInput;
}

/** One way an input breaks its schema: where (a JSON Pointer, "" for the input itself) and what. */
export interface InputIssue {
  path: string;
  message: string;
}

/**
 * A definition's declared input. Plain data and functions: a definition made by one copy of this
 * package is executed by another (a CLI loading a user's module).
 */
export interface DeclaredInput {
  /** Its JSON Schema, as workers announce it. */
  readonly jsonSchema: Readonly<Record<string, unknown>>;
  /** The input as the definition's function receives it (defaults and transforms applied), or why it does not match. */
  check(value: unknown): Promise<{ ok: true; value: unknown } | { ok: false; issues: InputIssue[] }>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyDefinition = WorkflowDefinition<any, any>;

/** Why this execution exists: the first process of the run, or a replacement. */
export type Recovery =
  | { kind: "initial" }
  | {
      kind: "resumed";
      /** "crash": the previous worker stopped renewing its lease; "continued": after a wait, a hold release or a graceful hand-off. */
      reason: "crash" | "continued";
    };

/** What a step's function receives; `idempotencyKey` is stable across attempts of the step. */
export interface StepInfo {
  runId: string;
  stepId: string;
  attempt: number;
  idempotencyKey: string;
}

export type ReconcileResult<T> =
  | { status: "done"; result: T }
  | { status: "not-done" }
  | { status: "unknown" };

export interface StepOptions<T = unknown> {
  /**
   * The step may reach the outside world. An intent is committed before it runs; if the process
   * dies before its outcome is committed, the run is held `ambiguous_effect` (unless `retry` is
   * "always" or `reconcile` tells what happened).
   */
  effect?: boolean;
  /** "always": the effect is safe to run again after a crash (declared idempotent). */
  retry?: "always";
  /** Asks the outside world whether an interrupted effect happened. */
  reconcile?: (info: StepInfo) => Promise<ReconcileResult<T>> | ReconcileResult<T>;
  /** Tries, in this process, when the function throws. Default 1 (no retry). */
  attempts?: number;
  /** Delay before the second try, doubled for each further try (capped at 30 s). Default 200 ms. */
  backoffMs?: number;
}

export interface ApprovalDecision {
  approved: boolean;
  by: string | null;
  reason: string | null;
  at: number;
}

/**
 * The `ctx` a workflow function receives. Every method is journaled; replay returns recorded values.
 * Step ids, sleep ids, approval and signal names and child ids share one namespace per run: each
 * must be unique (a repeat fails the run with STEAD_DUPLICATE_STEP_ID naming both call sites), and
 * 1-200 characters without NUL (else STEAD_INVALID_DEFINITION).
 */
export interface WorkflowContext {
  readonly runId: string;
  /** The idempotency key of the step whose function is running (inside a step function). */
  readonly idempotencyKey: string;
  step<T>(id: string, fn: (info: StepInfo) => Promise<T> | T): Promise<T>;
  step<T>(id: string, options: StepOptions<T>, fn: (info: StepInfo) => Promise<T> | T): Promise<T>;
  /**
   * A secret, read at each call (from the environment, or the instance's `secretSource`) and never
   * journaled: it does not survive a restart, it is read again. From the first read on, the value
   * is redacted from everything stored (a step's output that contains it stores
   * `[redacted:secret:NAME]`). Throws STEAD_SECRET_MISSING when it is not set.
   */
  secret(name: string): string;
  /** The wall clock, journaled: replay sees the same value. */
  now(): number;
  /** A random number in [0, 1), journaled: replay sees the same value. */
  random(): number;
  /** A durable timer: the run parks with no process until the time has passed. */
  sleep(id: string, duration: string | number): Promise<void>;
  /** Parks the run until a person approves or denies (`stead approve|deny <run> <name>`). */
  approval(name: string, request?: unknown): Promise<ApprovalDecision>;
  /** Parks the run until `stead signal <run> <name> <json>` delivers a payload. */
  signal<T = unknown>(name: string): Promise<T>;
  /** Starts a child run and parks until it ends; returns its output or throws its failure. */
  child<I, O>(id: string, definition: WorkflowDefinition<I, O>, input: I): Promise<O>;
  /** Runs an agent (made with `agent()`) as a child run: `ctx.agent("fix", fixer, "the parser test fails")`. */
  agent<I, O>(id: string, definition: WorkflowDefinition<I, O>, input: I): Promise<O>;
}
