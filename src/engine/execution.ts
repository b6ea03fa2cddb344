import { AsyncLocalStorage } from "node:async_hooks";
import { SteadError, StepFailedError, errorMessage } from "../errors.js";
import { isStorageFull } from "../store/faults.js";
import type { ClaimedRun, EventWrite, HoldKind, Mutation, Owner, RunRow, StepKind, StepRow, StepWrite, Store, Unit, UnitResult, WaitOpen } from "../store/types.js";
import type { ApprovalDecision, Recovery, StepInfo, StepOptions, WorkflowContext } from "./context-types.js";
import { crashPoint } from "./crash-points.js";
import type { AnyDefinition, WorkflowDefinition } from "./definition.js";
import { parseDuration } from "./durations.js";
import { decodeError, decodePayload, encodeError, encodePayload, errorRecord } from "./payload.js";
import { childRunId } from "./ids.js";
import { portedBody, type EnginePort, type EngineStepOptions } from "./port.js";
import { resolveWaitUnit } from "./waits.js";
import { RunWorkspace, type CaptureParts, type WorkspaceOptions } from "./run-workspace.js";

export type ExecutionOutcome =
  | { kind: "completed" }
  | { kind: "failed"; error: string }
  | { kind: "waiting"; wait: string }
  | { kind: "held"; hold: HoldKind; reason: string }
  | { kind: "paused" }
  | { kind: "released" }
  | { kind: "requeued" }
  | { kind: "lease-lost" }
  /** Ended because the store cannot write (full): the worker hands the run back (see StorageGuard). */
  | { kind: "storage"; error: string }
  | { kind: "aborted"; error?: string };

export interface ExecutionDeps {
  owner: Owner;
  /** Commits one unit, durably, possibly batched with other runs' units (group commit). */
  commit(unit: Unit): Promise<UnitResult>;
  payloadLimit: number;
  /** Lost claims in a row (no step completing) that put a run on hold `process_failed`. */
  maxLostClaims: number;
  /** Reads (a session turn's earlier turns), workspace snapshots and blobs; every run change goes through `commit`. */
  store: Store;
  workspace?: WorkspaceOptions;
  /** Checkpoint metadata for each step write, already encoded (≤ 4 KB, redacted); absent: nothing is evaluated. */
  checkpoint?: () => string | null;
  /** What the worker did before this claim (restore hooks and their durations), for the `run.resumed` event. */
  resumed?: Record<string, unknown>;
  /**
   * Whether this claim's lease is known to be valid now: `true` at once when the last renewal is
   * recent, else a promise of a renewal made now (false: the lease is gone and the execution was
   * ended). Asked right before every step function, intent and reconcile (see `leaseHeld`).
   */
  checkLease?: () => true | Promise<boolean>;
}

const stepScope = new AsyncLocalStorage<StepInfo>();
const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

type State = "running" | "stopping" | "finished";

/**
 * Executes one claimed run until it completes, fails, parks, is held, or loses its lease.
 *
 * Invariants:
 * - Every write carries the claim's fence; a refused write ends the execution at once, and no
 *   further user code is resumed (ctx calls after that return promises that never settle).
 * - Journal position `seq` is the order in which the code asks for steps; replay requires the
 *   entry at each position to have the same step id and kind, else the run is held `nondeterminism`.
 * - now()/random() values are buffered and committed with the next write, before anything that
 *   could make them visible outside the process.
 */
export class Execution {
  readonly runId: string;
  readonly fence: number;
  private readonly run: RunRow;
  private readonly journal = new Map<number, StepRow>();
  private readonly maxSeq: number;
  private cursor = 0;
  private readonly callSites = new Map<string, Error>();
  private buffered: StepWrite[] = [];
  private readonly inFlight = new Set<Promise<unknown>>();
  private state: State = "running";
  private pausePending = false;
  private resolveDone!: (o: ExecutionOutcome) => void;
  private readonly done = new Promise<ExecutionOutcome>((r) => (this.resolveDone = r));
  private readonly ctx: WorkflowContext;
  private readonly ended = new AbortController();
  private ws: RunWorkspace | undefined;
  private readonly recovery: Recovery;
  /** What to store as the run's output instead of the returned value (EnginePort.storeOutputAs). */
  private storedOutput: { value: unknown } | undefined;

  constructor(
    private readonly claimed: ClaimedRun,
    private readonly definition: AnyDefinition,
    private readonly deps: ExecutionDeps,
  ) {
    this.run = claimed.run;
    this.runId = claimed.run.id;
    this.fence = claimed.run.fence;
    let max = -1;
    for (const s of claimed.journal) {
      this.journal.set(s.seq, s);
      max = Math.max(max, s.seq);
    }
    this.maxSeq = max;
    this.recovery =
      claimed.previousStatus === "running"
        ? { kind: "resumed", reason: "crash" }
        : claimed.journal.length > 0
          ? { kind: "resumed", reason: "continued" }
          : { kind: "initial" };
    this.ctx = this.makePublicContext();
  }

  /** Resolves when the execution has ended, whatever the reason. */
  get finished(): Promise<ExecutionOutcome> {
    return this.done;
  }

  start(): Promise<ExecutionOutcome> {
    void this.begin().catch((e: unknown) => this.finish({ kind: "aborted", error: errorMessage(e) }));
    return this.done;
  }

  /** Ends the execution now, without writing (lease lost, a full store, forced shutdown). */
  abort(kind: "lease-lost" | "aborted" | "storage", error?: string): void {
    if (kind === "storage") this.finish({ kind, error: error ?? "the store cannot write" });
    else this.finish(kind === "lease-lost" ? { kind } : { kind, ...(error ? { error } : {}) });
  }

  /** Graceful stop: let in-flight steps commit, then hand the run back as pending for any worker. */
  release(): void {
    this.requestStop(async () => {
      await this.write({ run: { status: "pending", releaseLease: true }, events: [{ type: "run.released", data: { reason: "worker shutdown" } }] });
      return { kind: "released" };
    });
  }

  private finish(outcome: ExecutionOutcome): void {
    if (this.state === "finished") return;
    this.state = "finished";
    this.ended.abort();
    this.ws?.close();
    this.resolveDone(outcome);
  }

  private async begin(): Promise<void> {
    const run = this.run;
    if (this.claimed.previousStatus === "running" && run.lostClaims >= this.deps.maxLostClaims) {
      this.hold(
        "process_failed",
        `${run.lostClaims} claims in a row ended by lease loss with no step completing (a crash loop)`,
        { lostClaims: run.lostClaims },
      );
      return;
    }
    const fp = this.definition.fingerprint();
    if (run.fingerprint === null) {
      await this.write({ run: { fingerprint: fp }, events: [{ type: "run.fingerprint_adopted", data: { fingerprint: fp } }] });
    } else if (run.fingerprint !== fp) {
      this.hold(
        "definition_changed",
        `the code of ${run.definition} changed since this run started (recorded ${run.fingerprint}, loaded ${fp})`,
        { recorded: run.fingerprint, current: fp, module: this.definition.module },
      );
      return;
    }
    if (this.state !== "running") return;
    if (!(await this.openWorkspace())) return;
    if (run.sessionId && this.claimed.previousStatus === "running" && this.definition.onInterrupt === "interrupt") {
      // The turn ends where it was cut, unreplayed: its journal entries are not a divergence.
      this.cursor = this.maxSeq + 1;
      await this.complete({
        ok: false,
        error: new SteadError("STEAD_TURN_INTERRUPTED", `turn ${run.turn ?? "?"} of session ${run.sessionId} was cut off by a crash; its agent's policy is "interrupt", so it is not replayed`, {
          runId: run.id,
          fix: "send the input again as a new turn if it still matters, or set onInterrupt: \"resume\"",
        }),
      });
      return;
    }
    const input: unknown = decodePayload(run.input);
    let value: unknown;
    try {
      const body = portedBody(this.definition);
      value = body ? await body(this.ctx, input, this.port()) : await this.definition.fn(this.ctx, input);
    } catch (e) {
      await this.complete({ ok: false, error: e });
      return;
    }
    await this.complete({ ok: true, value });
  }

  /**
   * Brings the run's workspace to its last completed step before any user code runs (a first
   * claim records a `start` snapshot instead), and reports restore hooks. False: the run was held.
   */
  private async openWorkspace(): Promise<boolean> {
    const events: EventWrite[] = this.deps.resumed ? [{ type: "run.resumed", data: this.deps.resumed }] : [];
    let start: CaptureParts = RunWorkspace.none();
    const root = this.run.workspace;
    if (root) {
      try {
        const opened = await RunWorkspace.open(this.deps.store, this.claimed, root, this.deps.workspace ?? {});
        this.ws = opened.ws;
        if (this.isFinished()) {
          opened.ws.close();
          return false;
        }
        events.push(...opened.events);
        if (opened.fresh) start = await opened.ws.capture(-1, null, "start", this.checkpointText());
      } catch (e) {
        this.hold(
          "recovery_gap",
          `the workspace ${root} could not be brought to the run's last completed step: ${errorMessage(e)}`,
          { workspace: root, error: errorMessage(e) },
        );
        return false;
      }
    }
    events.push(...start.events);
    if (events.length === 0 && start.snapshots.length === 0) return true;
    await this.write({ ...(start.snapshots.length ? { snapshots: start.snapshots } : {}), events });
    this.ws?.committed(start);
    return this.state === "running";
  }

  /** Checkpoint metadata for a write; a failure to produce it is reported, never stored truncated. */
  private checkpointText(): string | null {
    if (!this.deps.checkpoint) return null;
    try {
      return this.deps.checkpoint();
    } catch (e) {
      process.emitWarning(`stead: checkpoint metadata for run ${this.runId} was not recorded: ${errorMessage(e)}`);
      return null;
    }
  }

  private async complete(result: { ok: true; value: unknown } | { ok: false; error: unknown }): Promise<void> {
    if (this.state !== "running") return;
    this.state = "stopping";
    await settleAll(this.inFlight);
    if (this.isFinished()) return;
    if (this.maxSeq >= this.cursor) {
      const left = this.journal.get(this.maxSeq);
      await this.commitHold(
        "nondeterminism",
        `the code finished at journal position ${this.cursor}, but the journal has "${left?.stepId ?? "?"}" at position ${this.maxSeq}`,
        { expected: left?.stepId ?? null, requested: null, position: this.cursor },
        left?.stepId ?? null,
        this.maxSeq,
      );
      return;
    }
    let output: string | null = null;
    let error: unknown = result.ok ? undefined : result.error;
    let full: string | null = null;
    if (result.ok) {
      try {
        full = encodePayload(result.value, `the output of run ${this.runId}`, this.deps.payloadLimit, { runId: this.runId });
        output = this.storedOutput ? encodePayload(this.storedOutput.value, `the stored output of run ${this.runId}`, this.deps.payloadLimit, { runId: this.runId }) : full;
      } catch (e) {
        error = e;
      }
    }
    if (error === undefined) {
      await this.write(
        { run: { status: "completed", output, releaseLease: true, lostClaims: 0, pauseRequested: false }, events: [{ type: "run.completed", data: {} }] },
        this.parentWake({ status: "completed", output: decodePayload(full) }),
      );
      this.finish({ kind: "completed" });
    } else {
      const rec = errorRecord(error);
      await this.write(
        { run: { status: "failed", error: encodeError(error), releaseLease: true, lostClaims: 0, pauseRequested: false }, events: [{ type: "run.failed", data: { error: rec.message, code: rec.code ?? null, ...(rec.fix ? { fix: rec.fix } : {}) } }] },
        this.parentWake({ status: "failed", error: rec }),
      );
      this.finish({ kind: "failed", error: rec.message });
    }
  }

  private isFinished(): boolean {
    return this.state === "finished";
  }

  private parentWake(result: Record<string, unknown>): Mutation[] {
    const { parentId, parentStepId } = this.run;
    if (!parentId || !parentStepId) return [];
    return resolveParent(parentId, parentStepId, this.runId, result);
  }

  /** One fenced write; on refusal the execution ends with `lease-lost` and the caller never resumes. */
  private async write(m: Omit<Mutation, "runId" | "expect">, extra: Mutation[] = [], expect: Mutation["expect"] = {}): Promise<void> {
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
      this.finish(isStorageFull(e) ? { kind: "storage", error: errorMessage(e) } : { kind: "aborted", error: `store write failed: ${errorMessage(e)}` });
      return never();
    }
    if (!r.ok) {
      if (r.reason === "wait") {
        await this.requeue();
        return never();
      }
      this.finish({ kind: "lease-lost" });
      return never();
    }
    // Aborted while the write was in flight (lease or presence lost): it landed under the old
    // fence, but another execution may own the run by now; resume no user code (an effect would run twice).
    if (this.isFinished()) return never();
    if (r.pauseRequested && this.state === "running") this.flagPause();
  }

  /** A wait this execution relied on was answered meanwhile: give the run back to be replayed afresh. */
  private async requeue(): Promise<void> {
    const r = await this.deps.commit([
      { runId: this.runId, expect: { lease: { fence: this.fence, owner: this.deps.owner.workerId } }, run: { status: "pending", releaseLease: true } },
    ]);
    this.finish(r.ok ? { kind: "requeued" } : { kind: "lease-lost" });
  }

  private flagPause(): void {
    this.pausePending = true;
    setImmediate(() => {
      this.requestStop(async () => {
        await this.write({ run: { status: "paused", releaseLease: true, pauseRequested: false }, events: [{ type: "run.paused", data: {} }] });
        return { kind: "paused" };
      });
    });
  }

  /** Stops taking new ctx calls, lets in-flight steps finish and commit, then runs `finalize`. */
  private requestStop(finalize: () => Promise<ExecutionOutcome>): void {
    if (this.state !== "running") return;
    this.state = "stopping";
    void (async () => {
      await settleAll(this.inFlight);
      if (this.isFinished()) return;
      this.finish(await finalize());
    })().catch((e: unknown) => this.finish({ kind: "aborted", error: errorMessage(e) }));
  }

  private accepting(): boolean {
    return this.state === "running" && !this.pausePending;
  }

  private hold(kind: HoldKind, reason: string, facts: Record<string, unknown>, stepId: string | null = null, seq: number | null = null): void {
    this.requestStop(async () => {
      await this.commitHold(kind, reason, facts, stepId, seq);
      return { kind: "held", hold: kind, reason };
    });
  }

  private async commitHold(kind: HoldKind, reason: string, facts: Record<string, unknown>, stepId: string | null, seq: number | null): Promise<void> {
    await this.write({
      run: { status: "held", releaseLease: true },
      holds: [{ kind, stepId, seq, reason, details: JSON.stringify(facts) }],
      events: [{ type: "run.held", data: { hold: kind, reason, step: stepId } }],
    });
    this.finish({ kind: "held", hold: kind, reason });
  }

  private park(
    wait: WaitOpen & { stepId: string; stepKind: StepKind },
    isNew: boolean,
    newRuns: Mutation["newRuns"] = [],
  ): Promise<never> {
    this.requestStop(async () => {
      const startedAt = Date.now();
      await this.write(
        {
          run: { status: "waiting", releaseLease: true, lostClaims: 0 },
          ...(isNew
            ? {
                steps: [{ seq: wait.seq, stepId: wait.stepId, kind: wait.stepKind, status: "waiting", attempt: 1, output: null, startedAt }],
                waits: [{ name: wait.name, kind: wait.kind, seq: wait.seq, request: wait.request ?? null, wakeAt: wait.wakeAt ?? null }],
                newRuns,
              }
            : {}),
          events: [
            ...(isNew ? [{ type: "wait.opened", data: { wait: wait.name, kind: wait.kind, wakeAt: wait.wakeAt ?? null } }] : []),
            { type: "run.waiting", data: { wait: wait.name, kind: wait.kind } },
            ...(newRuns.length ? newRuns.map((r) => ({ type: "child.started", data: { child: r.id, definition: r.definition } })) : []),
          ],
        },
        [],
        isNew ? {} : { openWait: wait.name },
      );
      return { kind: "waiting", wait: wait.name };
    });
    return never();
  }

  /** Claims the next journal position for `stepId`; returns its entry, or holds on divergence. */
  private position(stepId: string, kinds: readonly StepKind[]): { seq: number; entry: StepRow | undefined } | undefined {
    const seq = this.cursor++;
    const entry = this.journal.get(seq);
    if (entry && (entry.stepId !== stepId || !kinds.includes(entry.kind))) {
      this.hold(
        "nondeterminism",
        `replay diverged at journal position ${seq}: the journal has ${entry.kind} "${entry.stepId}", the code asked for ${kinds[0] ?? "step"} "${stepId}"`,
        { position: seq, expected: entry.stepId, expectedKind: entry.kind, requested: stepId, requestedKind: kinds[0] ?? null },
        entry.stepId,
        seq,
      );
      return undefined;
    }
    return { seq, entry };
  }

  private checkUnique(stepId: string): void {
    if (typeof stepId !== "string" || stepId.length === 0 || stepId.length > 200) {
      throw new SteadError("STEAD_INVALID_DEFINITION", `invalid step id ${JSON.stringify(stepId)} in run ${this.runId}`, {
        runId: this.runId,
        fix: "give every step a non-empty string id of at most 200 characters",
      });
    }
    const here = new Error();
    const first = this.callSites.get(stepId);
    if (first) {
      throw new SteadError(
        "STEAD_DUPLICATE_STEP_ID",
        `step id "${stepId}" is used twice in run ${this.runId}: first at ${callSite(first)}, again at ${callSite(here)}`,
        { runId: this.runId, stepId, fix: "give each step a unique id, e.g. include the loop index: `fetch-${i}`" },
      );
    }
    this.callSites.set(stepId, here);
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inFlight.add(p);
    const remove = () => this.inFlight.delete(p);
    p.then(remove, remove);
    return p;
  }

  private async step<T>(stepId: string, options: EngineStepOptions<T>, fn: (info: StepInfo) => Promise<T> | T): Promise<T> {
    if (!this.accepting()) return never();
    this.checkUnique(stepId);
    const kind: StepKind = options.kind ?? (options.effect ? "effect" : "step");
    const pos = this.position(stepId, [kind]);
    if (!pos) return never();
    const { seq, entry } = pos;
    if (entry) {
      switch (entry.status) {
        case "completed":
          return decodePayload<T>(entry.output);
        case "failed":
          throw this.replayError(stepId, entry);
        case "retry":
          return this.track(this.live(stepId, seq, kind, options, fn, entry.attempt + 1));
        case "intent":
          // Not tracked as a whole: it may end in a hold, which waits for tracked steps to settle.
          return this.ambiguous(stepId, seq, kind, options, fn, entry);
        case "waiting":
          break;
      }
    }
    return this.track(this.live(stepId, seq, kind, options, fn, 1));
  }

  private replayError(stepId: string, entry: StepRow): StepFailedError {
    const rec = decodeError(entry.error);
    return new StepFailedError(this.runId, stepId, rec.message, rec.name, rec.code, rec.fix);
  }

  private info(stepId: string, attempt: number): StepInfo {
    return { runId: this.runId, stepId, attempt, idempotencyKey: `${this.runId}:${stepId}` };
  }

  private async ambiguous<T>(stepId: string, seq: number, kind: StepKind, options: EngineStepOptions<T>, fn: (info: StepInfo) => Promise<T> | T, entry: StepRow): Promise<T> {
    const attempt = entry.attempt + 1;
    if (options.retry === "always") return this.track(this.live(stepId, seq, kind, options, fn, attempt, "retry: always"));
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
        await this.write({
          steps: [{ seq, stepId, kind, status: "completed", attempt: entry.attempt, output, startedAt: entry.startedAt, completedAt: Date.now() }],
          run: { lostClaims: 0 },
          events: [{ type: "effect.reconciled", data: { step: stepId, seq, outcome: "done" } }],
        });
        return decodePayload<T>(output);
      }
      if (verdict.status === "not-done") return this.track(this.live(stepId, seq, kind, options, fn, attempt, "reconcile: not done"));
      this.ambiguousHold(stepId, seq, entry, "reconcile could not tell whether it happened" + ("error" in verdict ? ` (${String(verdict.error)})` : ""));
      return never();
    }
    this.ambiguousHold(stepId, seq, entry, "the process stopped after the effect's intent was committed and before its outcome was");
    return never();
  }

  private ambiguousHold(stepId: string, seq: number, entry: StepRow, why: string): void {
    this.hold(
      "ambiguous_effect",
      `effect step "${stepId}" may or may not have happened: ${why}`,
      { step: stepId, attempt: entry.attempt, idempotencyKey: `${this.runId}:${stepId}`, intentAt: entry.startedAt },
      stepId,
      seq,
    );
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
    if (this.isFinished()) return false;
    const check = this.deps.checkLease?.() ?? true;
    if (check === true) return true;
    return check.then((ok) => ok && !this.isFinished());
  }

  private async live<T>(
    stepId: string,
    seq: number,
    kind: StepKind,
    options: EngineStepOptions<T>,
    fn: (info: StepInfo) => Promise<T> | T,
    attempt: number,
    because?: string,
  ): Promise<T> {
    const info = this.info(stepId, attempt);
    const startedAt = Date.now();
    const ids = { runId: this.runId, stepId };
    const effect = kind === "effect" || options.effect === true;
    if (effect) {
      const held = this.leaseHeld(stepId);
      if (held !== true && !(await held)) return never();
      crashPoint("before-intent", [stepId]);
      await this.write({
        steps: [{ seq, stepId, kind, status: "intent", attempt, startedAt }],
        events: [{ type: "step.intent", data: { step: stepId, seq, attempt, idempotencyKey: info.idempotencyKey, ...(because ? { because } : {}) } }],
      });
      crashPoint("after-intent", [stepId]);
    }
    // Every step that may change files is captured (model calls change none): a resume restores
    // the last completed step's snapshot, which must hold what every step before it wrote.
    const ws = kind !== "model" ? this.ws : undefined;
    const settle = ws?.settle(seq, stepId, async (parts) => {
      if (this.state === "finished") return false;
      await this.write({ ...(parts.snapshots.length ? { snapshots: parts.snapshots } : {}), events: parts.events });
      ws.committed(parts);
      return true;
    });
    const tries = Math.max(1, Math.floor(options.attempts ?? 1));
    let value: unknown;
    let failure: unknown;
    let failed = false;
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
        if (t >= tries || !this.accepting()) break;
        const delay = Math.min(30_000, (options.backoffMs ?? 200) * 2 ** (t - 1));
        await new Promise((r) => setTimeout(r, delay));
      }
    }
    await settle?.stop();
    // Ended meanwhile (forced stop, lease lost): a failure now is most likely the abort the step saw
    // through the execution's signal, not its outcome. Journaled, it would replay as a real failure.
    if (failed && this.isFinished()) return never();
    if (effect) crashPoint("after-effect", [stepId]);
    let output: string | null = null;
    if (!failed) {
      try {
        output = encodePayload(value, `step "${stepId}"`, this.deps.payloadLimit, ids);
      } catch (e) {
        failed = true;
        failure = e;
      }
    }
    const completedAt = Date.now();
    const ms = completedAt - startedAt;
    // Files as this step left them, committed with its outcome: the snapshot and the journal position agree.
    // Evaluated once for the step's write and the snapshot in it: both carry the same metadata.
    const checkpoint = ws && this.deps.checkpoint ? { checkpoint: this.checkpointText() } : {};
    const parts = ws && !this.isFinished() ? await ws.capture(seq, stepId, "step", checkpoint.checkpoint ?? null) : RunWorkspace.none();
    const snapshots = parts.snapshots.length ? { snapshots: parts.snapshots } : {};
    if (failed) {
      const error = encodeError(failure);
      await this.write({
        steps: [{ seq, stepId, kind, status: "failed", attempt, error, startedAt, completedAt, ...checkpoint }],
        run: { lostClaims: 0 },
        ...snapshots,
        events: [{ type: "step.failed", data: { step: stepId, seq, attempt, ms, error: errorMessage(failure) } }, ...parts.events],
      });
      ws?.committed(parts);
      crashPoint("after-commit", [stepId]);
      throw this.replayError(stepId, { error } as StepRow);
    }
    // Live events of this attempt give way to its outcome, in the same write (DESIGN: the one compaction).
    const compacts = options.compacts;
    await this.write({
      steps: [{ seq, stepId, kind, status: "completed", attempt, output, startedAt, completedAt, ...checkpoint }],
      run: { lostClaims: 0 },
      ...snapshots,
      ...(compacts ? { deleteEvents: { type: compacts.type, step: stepId, attempt } } : {}),
      events: [...(compacts ? [compacts.marker(attempt)] : []), { type: "step.completed", data: { step: stepId, seq, attempt, ms } }, ...parts.events],
    });
    ws?.committed(parts);
    crashPoint("after-commit", [stepId]);
    // The recorded outcome, not the live value: replay must see exactly what this execution saw
    // (JSON turns `[undefined]` into `[null]` and drops undefined properties).
    return decodePayload<T>(output);
  }

  private recorded(kind: "now" | "random", make: () => number): number {
    if (!this.accepting()) return make();
    const pos = this.position(kind, [kind]);
    if (!pos) return make();
    if (pos.entry) return decodePayload<number>(pos.entry.output);
    const v = make();
    const at = Date.now();
    this.buffered.push({ seq: pos.seq, stepId: kind, kind, status: "completed", attempt: 1, output: JSON.stringify(v), startedAt: at, completedAt: at });
    return v;
  }

  private waitStep<T>(
    stepId: string,
    kind: "sleep" | "approval" | "signal" | "child" | "quota",
    open: () => { wait: WaitOpen; newRuns?: Mutation["newRuns"] },
  ): Promise<T> {
    if (!this.accepting()) return never();
    try {
      this.checkUnique(stepId);
    } catch (e) {
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
    const pos = this.position(stepId, [kind]);
    if (!pos) return never();
    const { seq, entry } = pos;
    if (entry?.status === "completed") return Promise.resolve(decodePayload<T>(entry.output));
    const waitKind = kind === "sleep" ? "timer" : kind;
    if (entry?.status === "waiting") return this.park({ name: stepId, kind: waitKind, seq, stepId, stepKind: kind }, false);
    let opened;
    try {
      opened = open();
    } catch (e) {
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
    return this.park({ ...opened.wait, seq, stepId, stepKind: kind }, true, opened.newRuns ?? []);
  }

  private port(): EnginePort {
    return {
      run: this.run,
      recovery: this.recovery,
      signal: this.ended.signal,
      payloadLimit: this.deps.payloadLimit,
      step: (id, options, fn) => this.step(id, options, fn),
      quotaPark: (id, wakeAt, request) =>
        this.waitStep<unknown>(id, "quota", () => ({
          wait: { name: id, kind: "quota", seq: 0, wakeAt, request: encodePayload(request, `the quota wait "${id}"`, this.deps.payloadLimit, { runId: this.runId, stepId: id }) },
        })).then(() => undefined),
      emit: (events: EventWrite[]) => {
        if (this.isFinished()) return never();
        return this.track(this.write({ events }));
      },
      storeOutputAs: (stored: unknown) => {
        this.storedOutput = { value: stored };
      },
      earlierTurns: async () => {
        const { sessionId, turn } = this.run;
        if (!sessionId || turn === null) return [];
        const runs = (await this.deps.store.listRuns({ sessionId, limit: 100_000 })).filter((r) => r.turn !== null && r.turn < turn);
        return Promise.all(runs.map(async (r) => ({ run: r, journal: await this.deps.store.journal(r.id) })));
      },
    };
  }

  private makePublicContext(): WorkflowContext {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the getter below needs the execution, not the ctx object
    const self = this;
    const limit = this.deps.payloadLimit;
    return {
      runId: this.runId,
      get idempotencyKey(): string {
        const info = stepScope.getStore();
        if (!info || info.runId !== self.runId) {
          throw new SteadError("STEAD_INVALID_DEFINITION", "ctx.idempotencyKey is only defined inside a step function", {
            runId: self.runId,
            fix: "read it inside ctx.step(id, fn), or use the `idempotencyKey` field of the step function's argument",
          });
        }
        return info.idempotencyKey;
      },
      step<T>(id: string, a: StepOptions<T> | ((info: StepInfo) => Promise<T> | T), b?: (info: StepInfo) => Promise<T> | T): Promise<T> {
        const fn = typeof a === "function" ? a : b;
        const options = typeof a === "function" ? {} : a;
        if (typeof fn !== "function") {
          return Promise.reject(
            new SteadError("STEAD_INVALID_DEFINITION", `step "${id}" has no function`, {
              runId: self.runId,
              stepId: id,
              fix: "call ctx.step(id, fn) or ctx.step(id, options, fn)",
            }),
          );
        }
        return self.step(id, options, fn);
      },
      now: () => this.recorded("now", () => Date.now()),
      random: () => this.recorded("random", () => Math.random()),
      sleep: (id, duration) =>
        this.waitStep<void>(id, "sleep", () => ({ wait: { name: id, kind: "timer", seq: 0, wakeAt: Date.now() + parseDuration(duration, `duration of sleep "${id}"`) } })).then(
          () => undefined,
        ),
      approval: (name, request) =>
        this.waitStep<ApprovalDecision>(name, "approval", () => ({
          wait: { name, kind: "approval", seq: 0, request: encodePayload(request, `the request of approval "${name}"`, limit, { runId: this.runId, stepId: name }) },
        })),
      signal: <T>(name: string) => this.waitStep<T>(name, "signal", () => ({ wait: { name, kind: "signal", seq: 0 } })),
      agent: <I, O>(id: string, def: WorkflowDefinition<I, O>, input: I) => self.ctx.child(id, def, input),
      child: <I, O>(id: string, def: WorkflowDefinition<I, O>, input: I) =>
        this.waitStep<{ status: string; output?: O; error?: { message: string; name: string; code?: string } }>(id, "child", () => {
          const childId = childRunId(this.runId, id);
          return {
            wait: { name: id, kind: "child", seq: 0, request: JSON.stringify({ child: childId, definition: def.name }) },
            newRuns: [
              {
                id: childId,
                definition: def.name,
                module: def.module,
                fingerprint: def.fingerprint(),
                input: encodePayload(input, `the input of child "${id}"`, limit, { runId: this.runId, stepId: id }) ?? "null",
                parentId: this.runId,
                parentStepId: id,
                createdAt: Date.now(),
              },
            ],
          };
        }).then((r) => {
          if (r.status === "completed") return r.output as O;
          throw new SteadError("STEAD_CHILD_FAILED", `child run ${childRunId(this.runId, id)} ${r.status}: ${r.error?.message ?? "no reason given"}`, {
            runId: this.runId,
            stepId: id,
            childStatus: r.status,
            fix: `inspect it with \`stead why ${childRunId(this.runId, id)}\``,
          });
        }),
    };
  }
}

/** Mutations that tell a parent waiting on `childId` how it ended (optional: the parent may be gone). */
export function resolveParent(parentId: string, parentStepId: string, childId: string, result: Record<string, unknown>): Mutation[] {
  return resolveWaitUnit(
    parentId,
    parentStepId,
    JSON.stringify(result),
    `run:${childId}`,
    { type: "wait.resolved", data: { wait: parentStepId, kind: "child", child: childId, status: result.status } },
    true,
  );
}

async function settleAll(set: Set<Promise<unknown>>): Promise<void> {
  while (set.size > 0) await Promise.allSettled([...set]);
}

function callSite(e: Error): string {
  const lines = (e.stack ?? "").split("\n").slice(1);
  const frame = lines.find((l) => !l.includes("/engine/execution.") && !l.includes("node:internal") && /\d+:\d+\)?\s*$/.test(l));
  return frame?.trim().replace(/^at\s+/, "") ?? "unknown location";
}
