import { errorMessage } from "../../errors.js";
import { isStorageFull } from "../../store/faults.js";
import type { Mutation, StepWrite, Unit, UnitResult } from "../../store/types.js";
import type { ExecutionDeps } from "./deps.js";
import type { Lifecycle } from "./lifecycle.js";
import type { ExecutionOutcome } from "./outcome.js";

export const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

/** What a write's result makes the execution do. */
export interface WriteOutcomes {
  finish(outcome: ExecutionOutcome): void;
  /** A commit reported that a person asked to pause the run. */
  pauseRequested(): void;
}

/**
 * The execution's one way to write: every mutation of the run carries the claim's fence and lease
 * owner, and a refused write ends the execution at once, with no user code resumed (the caller's
 * promise never settles).
 *
 * now()/random() values are buffered here and committed with the next write, before anything that
 * could make them visible outside the process.
 */
export class FencedWriter {
  private buffered: StepWrite[] = [];

  constructor(
    private readonly runId: string,
    private readonly fence: number,
    private readonly deps: ExecutionDeps,
    private readonly life: Lifecycle,
    private readonly on: WriteOutcomes,
  ) {}

  buffer(step: StepWrite): void {
    this.buffered.push(step);
  }

  /** Checkpoint metadata for a write; a failure to produce it is reported, never stored truncated. */
  checkpointText(): string | null {
    if (!this.deps.checkpoint) return null;
    try {
      return this.deps.checkpoint();
    } catch (e) {
      process.emitWarning(`stead: checkpoint metadata for run ${this.runId} was not recorded: ${errorMessage(e)}`);
      return null;
    }
  }

  /**
   * One fenced write; on refusal the execution ends with `lease-lost` and the caller never
   * resumes. Returns this run's mutation as the store wrote it (redacted: UnitResult.written), for
   * a caller that returns what was recorded (replay must see what live code saw).
   */
  async write(m: Omit<Mutation, "runId" | "expect">, extra: Mutation[] = [], expect: Mutation["expect"] = {}): Promise<Mutation> {
    let steps = this.buffered.length ? [...this.buffered, ...(m.steps ?? [])] : m.steps;
    this.buffered = [];
    if (steps && this.deps.checkpoint && steps.some((s) => s.checkpoint === undefined)) {
      const checkpoint = this.checkpointText();
      steps = steps.map((s) => (s.checkpoint === undefined ? { ...s, checkpoint } : s));
    }
    const unit: Unit = [{ ...m, steps, runId: this.runId, expect: { ...expect, lease: { fence: this.fence, owner: this.deps.owner.workerId } } }, ...extra];
    let r: UnitResult;
    try {
      r = await this.deps.commit(unit);
    } catch (e) {
      this.on.finish(isStorageFull(e) ? { kind: "storage", error: errorMessage(e) } : { kind: "aborted", error: `store write failed: ${errorMessage(e)}` });
      return never();
    }
    if (!r.ok) {
      if (r.reason === "wait") {
        await this.requeue();
        return never();
      }
      this.on.finish({ kind: "lease-lost" });
      return never();
    }
    // Aborted while the write was in flight (lease or presence lost): it landed under the old
    // fence, but another execution may own the run by now; resume no user code (an effect would run twice).
    if (this.life.finished) return never();
    if (r.pauseRequested && this.life.accepting) this.on.pauseRequested();
    return (r.written ?? unit)[0] ?? unit[0] ?? { runId: this.runId };
  }

  /** A wait this execution relied on was answered meanwhile: give the run back to be replayed afresh. */
  private async requeue(): Promise<void> {
    const r = await this.deps.commit([
      { runId: this.runId, expect: { lease: { fence: this.fence, owner: this.deps.owner.workerId } }, run: { status: "pending", releaseLease: true } },
    ]);
    this.on.finish(r.ok ? { kind: "requeued" } : { kind: "lease-lost" });
  }
}
