import type { Recovery, StepInfo } from "../engine/context-types.js";
import type { EngineStepOptions } from "../engine/port.js";
import type { EventWrite } from "../store/types.js";
import type { StreamRedaction } from "../redaction/stream-redactor.js";

/**
 * What the agent loop runs on. Live: a Stead execution (every call journaled). History: the
 * journal of an earlier, finished session turn, read back to rebuild its transcript.
 */
export interface LoopDriver {
  readonly runId: string;
  readonly recovery: Recovery;
  readonly signal: AbortSignal;
  /** False when replaying a finished turn: nothing may run, only recorded outcomes are read. */
  readonly live: boolean;
  readonly payloadLimit: number;
  readonly workspace: string | null;
  /** The engine records a tool's error as its step's outcome (EnginePort.errorOutcomes); otherwise as the old in-band marker. */
  readonly errorOutcomes: boolean;
  step<T>(id: string, options: EngineStepOptions<T>, fn: (info: StepInfo) => Promise<T> | T): Promise<T>;
  approval(name: string, request: unknown): Promise<unknown>;
  quotaPark(id: string, wakeAt: number, request: unknown): Promise<void>;
  emit(events: EventWrite[]): Promise<void>;
  /** A new redaction of one stream of live text, applied before its pieces are emitted. */
  redactStream(): StreamRedaction;
  /** Resolves once the lease is known to be held now; never settles when it is not (see EnginePort.leaseHeld). */
  leaseHeld(): Promise<void>;
  /** History only: whether the journal has an outcome for this step or wait id. */
  recorded?(id: string): boolean;
}

/** Thrown by a history driver where the earlier turn's journal ends (the turn was cut off there). */
export class JournalEnd extends Error {
  constructor(readonly stepId: string) {
    super(`the journal ends before "${stepId}"`);
    this.name = "JournalEnd";
  }
}
