import { describeThrown } from "./thrown.js";

/**
 * Every user-facing failure is a SteadError with a stable `code`, the ids involved,
 * and a `fix` sentence telling the user what they can do.
 */
export type SteadErrorCode =
  | "STEAD_BAD_INPUT"
  | "STEAD_RUN_NOT_FOUND"
  | "STEAD_WAIT_NOT_FOUND"
  | "STEAD_HOLD_NOT_FOUND"
  | "STEAD_STEP_NOT_FOUND"
  | "STEAD_INVALID_STATE"
  | "STEAD_LEASE_LOST"
  | "STEAD_DUPLICATE_STEP_ID"
  | "STEAD_PAYLOAD_TOO_LARGE"
  | "STEAD_PAYLOAD_TOO_DEEP"
  | "STEAD_NOT_SERIALIZABLE"
  | "STEAD_NOT_A_STORE"
  | "STEAD_STORE_TOO_NEW"
  | "STEAD_STORE_MISSING"
  | "STEAD_STORE_TOO_OLD"
  | "STEAD_STORE_NOT_READABLE"
  | "STEAD_STORE_NOT_WRITABLE"
  | "STEAD_STORE_UNREACHABLE"
  | "STEAD_STORE_AUTH_FAILED"
  | "STEAD_STORE_LOST"
  | "STEAD_STORAGE_FULL"
  | "STEAD_IDEMPOTENCY_CONFLICT"
  | "STEAD_DEFINITION_NOT_FOUND"
  | "STEAD_DEFINITION_CHANGED"
  | "STEAD_NONDETERMINISM"
  | "STEAD_STEP_FAILED"
  | "STEAD_OUTCOME_UNKNOWN"
  | "STEAD_CHILD_FAILED"
  | "STEAD_CANCELLED"
  | "STEAD_TIMEOUT"
  | "STEAD_AGENT_LIMIT"
  | "STEAD_PROVIDER_UNAVAILABLE"
  | "STEAD_PROVIDER_REJECTED"
  | "STEAD_TOOL_FAILED"
  | "STEAD_TURN_INTERRUPTED"
  | "STEAD_RESTORE_FAILED"
  | "STEAD_SNAPSHOT_NOT_FOUND";

export interface SteadErrorDetails {
  runId?: string;
  stepId?: string;
  fix?: string;
  cause?: unknown;
  [key: string]: unknown;
}

export class SteadError extends Error {
  readonly code: SteadErrorCode;
  readonly runId: string | undefined;
  readonly stepId: string | undefined;
  readonly fix: string | undefined;
  readonly details: Record<string, unknown>;

  constructor(code: SteadErrorCode, message: string, details: SteadErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = "SteadError";
    this.code = code;
    this.runId = details.runId;
    this.stepId = details.stepId;
    this.fix = details.fix;
    const { cause: _cause, ...rest } = details;
    this.details = rest;
  }

  /** One line for a terminal: the problem, then the fix. */
  toLine(): string {
    return this.fix ? `${this.message} — ${this.fix}` : this.message;
  }
}

export class LeaseLostError extends SteadError {
  constructor(runId: string, fence: number) {
    super("STEAD_LEASE_LOST", `lease on run ${runId} (fence ${fence}) was lost: another worker owns the run now`, {
      runId,
      fence,
      fix: "nothing to do: this worker stopped the run and the new owner continues it",
    });
    this.name = "LeaseLostError";
  }
}

/**
 * The error a step's thrown value becomes in the journal, and the one replay throws again. Its
 * `code` is the original's when that was a Stead code (e.g. STEAD_OUTCOME_UNKNOWN for a skipped
 * effect), else STEAD_STEP_FAILED; `originalName` / `originalCode` keep what the step threw.
 */
export class StepFailedError extends SteadError {
  constructor(runId: string, stepId: string, message: string, readonly originalName: string, readonly originalCode?: string, fix?: string) {
    super(isSteadCode(originalCode) ? originalCode : "STEAD_STEP_FAILED", message, { runId, stepId, ...(fix ? { fix } : {}) });
    this.name = "StepFailedError";
  }
}

/** Keyed by the union, so a code added to SteadErrorCode and not here fails to compile. */
const CODE_TABLE: Record<SteadErrorCode, true> = {
  STEAD_BAD_INPUT: true,
  STEAD_RUN_NOT_FOUND: true,
  STEAD_WAIT_NOT_FOUND: true,
  STEAD_HOLD_NOT_FOUND: true,
  STEAD_STEP_NOT_FOUND: true,
  STEAD_INVALID_STATE: true,
  STEAD_LEASE_LOST: true,
  STEAD_DUPLICATE_STEP_ID: true,
  STEAD_PAYLOAD_TOO_LARGE: true,
  STEAD_PAYLOAD_TOO_DEEP: true,
  STEAD_NOT_SERIALIZABLE: true,
  STEAD_NOT_A_STORE: true,
  STEAD_STORE_TOO_NEW: true,
  STEAD_STORE_MISSING: true,
  STEAD_STORE_TOO_OLD: true,
  STEAD_STORE_NOT_READABLE: true,
  STEAD_STORE_NOT_WRITABLE: true,
  STEAD_STORE_UNREACHABLE: true,
  STEAD_STORE_AUTH_FAILED: true,
  STEAD_STORE_LOST: true,
  STEAD_STORAGE_FULL: true,
  STEAD_IDEMPOTENCY_CONFLICT: true,
  STEAD_DEFINITION_NOT_FOUND: true,
  STEAD_DEFINITION_CHANGED: true,
  STEAD_NONDETERMINISM: true,
  STEAD_STEP_FAILED: true,
  STEAD_OUTCOME_UNKNOWN: true,
  STEAD_CHILD_FAILED: true,
  STEAD_CANCELLED: true,
  STEAD_TIMEOUT: true,
  STEAD_AGENT_LIMIT: true,
  STEAD_PROVIDER_UNAVAILABLE: true,
  STEAD_PROVIDER_REJECTED: true,
  STEAD_TOOL_FAILED: true,
  STEAD_TURN_INTERRUPTED: true,
  STEAD_RESTORE_FAILED: true,
  STEAD_SNAPSHOT_NOT_FOUND: true,
};
const CODES: ReadonlySet<string> = new Set(Object.keys(CODE_TABLE));

export function isSteadCode(code: unknown): code is SteadErrorCode {
  return typeof code === "string" && CODES.has(code);
}

export function isSteadError(e: unknown): e is SteadError {
  try {
    return e instanceof SteadError;
  } catch {
    // A Proxy whose getPrototypeOf trap throws.
    return false;
  }
}

/** A thrown value's message (an Error's `message`, else a description of the value). Never throws. */
export function errorMessage(e: unknown): string {
  return describeThrown(e).message;
}
