import { StepFailedError, errorMessage } from "../../errors.js";
import type { Mutation, StepKind, StepRow, StepWrite } from "../../store/types.js";
import type { StepInfo } from "../context-types.js";
import { crashPoint } from "../crash-points.js";
import type { EngineStepOptions } from "../port.js";
import { decodeError, decodePayload, encodeError, encodePayload } from "../payload.js";
import type { JournalCursor } from "./cursor.js";
import type { ExecutionDeps } from "./deps.js";
import { ERROR_OUTCOME } from "../runs/holds.js";
import { ambiguousEffect } from "./hold-facts.js";
import type { HoldFacts, Lifecycle } from "./lifecycle.js";
import { stepScope } from "./step-scope.js";
import type { WorkspaceHooks } from "./workspace-hooks.js";
import { never, type FencedWriter } from "./writer.js";

type StepFn<T> = (info: StepInfo) => Promise<T> | T;

const NO_EVENTS: readonly never[] = [];

/** What the step runner needs from its execution besides the parts it is given. */
export interface StepRunnerHost {
  /** Counts `p` among the steps an ending waits for. */
  track<T>(p: Promise<T>): Promise<T>;
  hold(h: HoldFacts): void;
}

/**
 * Runs `ctx.step` (and the agent's model and tool steps): replays a recorded outcome, or runs the
 * function live, with in-process retries, an intent before an effect, and the ambiguity of an
 * intent found with no outcome (retry, reconcile, or hold).
 */
export class StepRunner {
  constructor(
    private readonly runId: string,
    private readonly deps: ExecutionDeps,
    private readonly life: Lifecycle,
    private readonly cursor: JournalCursor,
    private readonly writer: FencedWriter,
    private readonly workspace: WorkspaceHooks,
    private readonly host: StepRunnerHost,
  ) {}

  async step<T>(stepId: string, options: EngineStepOptions<T>, fn: StepFn<T>): Promise<T> {
    if (!this.life.accepting) return never();
    this.cursor.checkUnique(stepId);
    const kind: StepKind = options.kind ?? (options.effect ? "effect" : "step");
    const pos = this.cursor.position(stepId, [kind]);
    if (!pos) return never();
    const { seq, entry } = pos;
    if (entry) {
      switch (entry.status) {
        case "completed":
          // An error outcome replays as the error it was live.
          if (entry.error !== null) throw this.replayError(stepId, entry);
          return decodePayload<T>(entry.output);
        case "failed":
          throw this.replayError(stepId, entry);
        case "retry":
          return this.host.track(this.live(stepId, seq, kind, options, fn, entry.attempt + 1));
        case "intent":
          // Not tracked as a whole: it may end in a hold, which waits for tracked steps to settle.
          return this.ambiguous(stepId, seq, kind, options, fn, entry);
        case "waiting":
          break;
      }
    }
    return this.host.track(this.live(stepId, seq, kind, options, fn, 1));
  }

  /** `ctx.now()` and `ctx.random()`: recorded at their journal position, committed with the next write. */
  recorded(kind: "now" | "random", make: () => number): number {
    if (!this.life.accepting) return make();
    const pos = this.cursor.position(kind, [kind]);
    if (!pos) return make();
    if (pos.entry) return decodePayload<number>(pos.entry.output);
    const v = make();
    const at = Date.now();
    this.writer.buffer({ seq: pos.seq, stepId: kind, kind, status: "completed", attempt: 1, output: JSON.stringify(v), startedAt: at, completedAt: at });
    return v;
  }

  private replayError(stepId: string, entry: Pick<StepRow, "error">): StepFailedError {
    const rec = decodeError(entry.error);
    return new StepFailedError(this.runId, stepId, rec.message, rec.name, rec.code, rec.fix);
  }

  private info(stepId: string, attempt: number): StepInfo {
    return { runId: this.runId, stepId, attempt, idempotencyKey: `${this.runId}:${stepId}` };
  }

  private async ambiguous<T>(stepId: string, seq: number, kind: StepKind, options: EngineStepOptions<T>, fn: StepFn<T>, entry: StepRow): Promise<T> {
    const attempt = entry.attempt + 1;
    if (options.retry === "always") return this.host.track(this.live(stepId, seq, kind, options, fn, attempt, "retry: always"));
    if (options.reconcile) {
      const held = this.leaseHeld(stepId);
      if (held !== true && !(await held)) return never();
      let verdict;
      try {
        verdict = await options.reconcile(this.info(stepId, entry.attempt));
      } catch (e) {
        verdict = { status: "unknown" as const, error: errorMessage(e) };
      }
      if (verdict.status === "done") {
        const output = encodePayload(verdict.result, `the reconciled result of step "${stepId}"`, this.deps.payloadLimit, { runId: this.runId, stepId });
        const step: StepWrite = { seq, stepId, kind, status: "completed", attempt: entry.attempt, output, startedAt: entry.startedAt, completedAt: Date.now() };
        const written = await this.writer.write({
          steps: [step],
          run: { lostClaims: 0 },
          events: [{ type: "effect.reconciled", data: { step: stepId, seq, outcome: "done" } }],
        });
        return decodePayload<T>(recorded(written, step).output ?? null);
      }
      if (verdict.status === "not-done") return this.host.track(this.live(stepId, seq, kind, options, fn, attempt, "reconcile: not done"));
      this.host.hold(ambiguousEffect(this.runId, stepId, seq, entry, "reconcile could not tell whether it happened" + ("error" in verdict ? ` (${String(verdict.error)})` : "")));
      return never();
    }
    this.host.hold(ambiguousEffect(this.runId, stepId, seq, entry, "the process stopped between recording the effect's intent and recording its outcome"));
    return never();
  }

  /**
   * Hazard: a worker frozen past its lease (SIGSTOP, a stalled VM, a long GC pause) may wake with
   * another worker already past this step; starting the step's function then would repeat a
   * completed side effect. So no step function, intent or reconcile starts without this check,
   * and the caller starts it in the same synchronous turn when it passes: a freeze can still land
   * in that one turn, and then the fence refuses the step's outcome.
   */
  private leaseHeld(stepId: string): boolean | Promise<boolean> {
    crashPoint("before-step", [stepId]);
    return this.stillHeld();
  }

  /**
   * The same check for work that starts without a step of its own: a step function's own later
   * tries (an agent's model call retried after a wait), an agent's `init`, a resumed run's
   * workspace restore.
   */
  stillHeld(): boolean | Promise<boolean> {
    if (this.life.finished) return false;
    const check = this.deps.checkLease?.() ?? true;
    if (check === true) return true;
    return check.then((ok) => ok && !this.life.finished);
  }

  private async live<T>(stepId: string, seq: number, kind: StepKind, options: EngineStepOptions<T>, fn: StepFn<T>, attempt: number, because?: string): Promise<T> {
    const info = this.info(stepId, attempt);
    const startedAt = Date.now();
    const ids = { runId: this.runId, stepId };
    const effect = kind === "effect" || options.effect === true;
    if (effect) {
      const held = this.leaseHeld(stepId);
      if (held !== true && !(await held)) return never();
      crashPoint("before-intent", [stepId]);
      await this.writer.write({
        steps: [{ seq, stepId, kind, status: "intent", attempt, startedAt }],
        events: [{ type: "step.intent", data: { step: stepId, seq, attempt, idempotencyKey: info.idempotencyKey, ...(because ? { because } : {}) } }],
      });
      crashPoint("after-intent", [stepId]);
    }
    const captured = this.workspace.captures(kind);
    const settle = captured ? this.workspace.watch(seq, stepId) : undefined;
    const tries = Math.max(1, Math.floor(options.attempts ?? 1));
    let value: unknown;
    let failure: unknown;
    let failed = false;
    let failedWhere: "function" | "storing" = "function";
    for (let t = 1; ; t++) {
      const held = this.leaseHeld(stepId);
      if (held !== true && !(await held)) return never();
      try {
        value = await stepScope.run(info, () => fn(info));
        failed = false;
        break;
      } catch (e) {
        failed = true;
        failure = e;
        if (t >= tries || !this.life.accepting) break;
        const delay = Math.min(30_000, (options.backoffMs ?? 200) * 2 ** (t - 1));
        await new Promise((r) => setTimeout(r, delay));
      }
    }
    await settle?.stop();
    // Ended meanwhile (forced stop, lease lost): a failure now is most likely the abort the step saw
    // through the execution's signal, not its outcome. Journaled, it would replay as a real failure.
    if (failed && this.life.finished) return never();
    if (effect) crashPoint("after-effect", [stepId]);
    let output: string | null = null;
    if (!failed) {
      try {
        output = encodePayload(value, `step "${stepId}"`, this.deps.payloadLimit, ids);
      } catch (e) {
        failed = true;
        failure = e;
        failedWhere = "storing";
      }
    }
    const completedAt = Date.now();
    const ms = completedAt - startedAt;
    // Files as this step left them, committed with its outcome: the snapshot and the journal position agree.
    // Evaluated once for the step's write and the snapshot in it: both carry the same metadata.
    const checkpoint = captured && this.deps.checkpoint ? { checkpoint: this.writer.checkpointText() } : {};
    const parts = captured ? await this.workspace.capture(seq, stepId, checkpoint.checkpoint ?? null) : undefined;
    const snapshots = parts?.snapshots.length ? { snapshots: parts.snapshots } : {};
    const captureEvents = parts?.events ?? NO_EVENTS;
    let outcome: string | undefined;
    if (failed && options.errorOutcome) {
      try {
        outcome = options.errorOutcome(failure, failedWhere);
      } catch (e) {
        // The caller's judgement threw (a tool's own `fatal`): that is the step's failure.
        failure = e;
      }
    }
    if (outcome !== undefined) {
      const step: StepWrite = { seq, stepId, kind, status: "completed", attempt, error: outcomeRecord(outcome, this.deps.payloadLimit), startedAt, completedAt, ...checkpoint };
      const written = await this.writer.write({
        steps: [step],
        run: { lostClaims: 0 },
        ...snapshots,
        events: [{ type: "step.completed", data: { step: stepId, seq, attempt, ms, outcome: "error" } }, ...captureEvents],
      });
      if (parts) this.workspace.committed(parts);
      crashPoint("after-commit", [stepId]);
      throw this.replayError(stepId, { error: recorded(written, step).error ?? null });
    }
    if (failed) {
      const failedStep: StepWrite = { seq, stepId, kind, status: "failed", attempt, error: encodeError(failure), startedAt, completedAt, ...checkpoint };
      const written = await this.writer.write({
        steps: [failedStep],
        run: { lostClaims: 0 },
        ...snapshots,
        events: [{ type: "step.failed", data: { step: stepId, seq, attempt, ms, error: errorMessage(failure) } }, ...captureEvents],
      });
      if (parts) this.workspace.committed(parts);
      crashPoint("after-commit", [stepId]);
      // As recorded (redacted by the store): replay throws the same error.
      throw this.replayError(stepId, { error: recorded(written, failedStep).error ?? null });
    }
    // Live events of this attempt give way to its outcome, in the same write (DESIGN: the one compaction).
    const compacts = options.compacts;
    const step: StepWrite = { seq, stepId, kind, status: "completed", attempt, output, startedAt, completedAt, ...checkpoint };
    const written = await this.writer.write({
      steps: [step],
      run: { lostClaims: 0 },
      ...snapshots,
      ...(compacts ? { deleteEvents: { type: compacts.type, step: stepId, attempt } } : {}),
      events: [...(compacts ? [compacts.marker(attempt)] : []), { type: "step.completed", data: { step: stepId, seq, attempt, ms } }, ...captureEvents],
    });
    if (parts) this.workspace.committed(parts);
    crashPoint("after-commit", [stepId]);
    // The recorded outcome, not the live value: replay must see exactly what this execution saw
    // (JSON turns `[undefined]` into `[null]` and drops undefined properties, and the store's
    // redaction may have rewritten the output it stored).
    return decodePayload<T>(recorded(written, step).output ?? null);
  }
}

/** `step` as the store wrote it: its row in the written mutation (the same journal position). */
function recorded(written: Mutation, step: StepWrite): StepWrite {
  return written.steps?.find((s) => s.seq === step.seq) ?? step;
}

/** An error outcome's record, its message cut to fit the payload ceiling (it is the step's payload). */
function outcomeRecord(message: string, limit: number): string {
  let text = message;
  for (;;) {
    const record = JSON.stringify({ ...ERROR_OUTCOME, message: text });
    if (Buffer.byteLength(record) <= limit || text.length <= 80) return record;
    const over = Buffer.byteLength(record) - limit;
    text = `${text.slice(0, Math.max(80, text.length - over - 40))}… (cut to the ${limit}-byte payload ceiling)`;
  }
}
