import { SteadError, errorMessage } from "../../errors.js";
import type { ClaimedRun, OutputRefField, RunRow } from "../../store/types.js";
import type { AnyDefinition } from "../definitions/definition.js";
import type { Recovery, WorkflowContext } from "../context-types.js";
import { portedBody } from "../port.js";
import { decodePayload } from "../payload.js";
import { envSecret } from "./secrets.js";
import { UNREDACTED_STREAM } from "../../redaction/stream-redactor.js";
import { checkedInput } from "../definitions/input-schema.js";
import { enginePort, publicContext, type ContextParts } from "./context.js";
import { JournalCursor } from "./cursor.js";
import type { ExecutionDeps } from "./deps.js";
import { writeEnding, type EndingParts } from "./endings.js";
import { crashLoop, definitionChanged } from "./hold-facts.js";
import { Lifecycle, type Ending, type HoldFacts } from "./lifecycle.js";
import type { ExecutionOutcome } from "./outcome.js";
import { StepRunner } from "./step-runner.js";
import { WaitSteps } from "./wait-steps.js";
import { WorkspaceHooks } from "./workspace-hooks.js";
import { FencedWriter } from "./writer.js";

/**
 * Executes one claimed run until it completes, fails, parks, is held, or loses its lease. Its
 * states and their transitions are in lifecycle.ts; this class wires the parts and is the only
 * caller of `Lifecycle.move`.
 *
 * Invariants:
 * - Every write carries the claim's fence; a refused write ends the execution at once, and no
 *   further user code is resumed (ctx calls after that return promises that never settle).
 * - An ending's write is made only after every tracked in-flight step has settled, so a step that
 *   completed is journaled before the run is parked, held, paused or released.
 */
export class Execution {
  readonly runId: string;
  readonly fence: number;
  private readonly run: RunRow;
  private readonly life = new Lifecycle();
  private readonly inFlight = new Set<Promise<unknown>>();
  private resolveDone!: (o: ExecutionOutcome) => void;
  private readonly done = new Promise<ExecutionOutcome>((r) => (this.resolveDone = r));
  private readonly ended = new AbortController();
  private readonly cursor: JournalCursor;
  private readonly writer: FencedWriter;
  private readonly workspace: WorkspaceHooks;
  private readonly ctx: WorkflowContext;
  /** What the ctx and the engine port are views of. */
  private readonly parts: ContextParts;
  private readonly endingParts: EndingParts;
  private storedOutput: { value: unknown; refs?: readonly OutputRefField[] } | undefined;

  constructor(
    private readonly claimed: ClaimedRun,
    private readonly definition: AnyDefinition,
    private readonly deps: ExecutionDeps,
  ) {
    this.run = claimed.run;
    this.runId = claimed.run.id;
    this.fence = claimed.run.fence;
    const hold = (h: HoldFacts): void => this.end({ kind: "hold", hold: h });
    const track = <T>(p: Promise<T>): Promise<T> => this.track(p);
    this.cursor = new JournalCursor(this.runId, claimed.journal, hold);
    this.writer = new FencedWriter(this.runId, this.fence, deps, this.life, {
      finish: (o) => this.finish(o),
      pauseRequested: () => this.pauseRequested(),
    });
    this.workspace = new WorkspaceHooks(claimed, deps, this.life, this.writer, hold);
    const steps = new StepRunner(this.runId, deps, this.life, this.cursor, this.writer, this.workspace, { track, hold });
    const waits = new WaitSteps(this.life, this.cursor, (e) => this.end(e));
    const recovery: Recovery =
      claimed.previousStatus === "running"
        ? { kind: "resumed", reason: "crash" }
        : claimed.journal.length > 0
          ? { kind: "resumed", reason: "continued" }
          : { kind: "initial" };
    this.parts = {
      run: this.run,
      recovery,
      signal: this.ended.signal,
      payloadLimit: deps.payloadLimit,
      store: deps.store,
      life: this.life,
      steps,
      waits,
      writer: this.writer,
      track,
      storeOutputAs: (stored, refs) => (this.storedOutput = refs ? { value: stored, refs } : { value: stored }),
      secret: deps.secret ?? envSecret,
      redactStream: deps.redactStream ?? (() => UNREDACTED_STREAM),
      // A ported body (an agent) of an older copy of the package asks for its tool approvals
      // through ctx.approval: its requests are judged by their shape, as they were written.
      codeRequestKind: portedBody(definition) ? null : "code",
    };
    this.ctx = publicContext(this.parts);
    this.endingParts = { run: this.run, payloadLimit: deps.payloadLimit, cursor: this.cursor, writer: this.writer, store: deps.store, storedOutput: () => this.storedOutput };
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
    this.end({ kind: "release" });
  }

  /** The checks before the code runs, then the code. */
  private async begin(): Promise<void> {
    const run = this.run;
    if (this.claimed.previousStatus === "running" && run.lostClaims >= this.deps.maxLostClaims) {
      this.end({ kind: "hold", hold: crashLoop(run) });
      return;
    }
    const fp = this.definition.fingerprint();
    if (run.fingerprint === null) {
      await this.writer.write({ run: { fingerprint: fp }, events: [{ type: "run.fingerprint_adopted", data: { fingerprint: fp } }] });
    } else if (run.fingerprint !== fp) {
      this.end({ kind: "hold", hold: definitionChanged(run.definition, run.fingerprint, fp, this.definition.module) });
      return;
    }
    if (!this.life.endable) return;
    // Hazard: restoring the workspace rewrites files. A worker frozen after its claim wakes with
    // another worker perhaps finished in the same directory; put back, its files would be lost.
    if (this.run.workspace) {
      const held = this.parts.steps.stillHeld();
      if (held !== true && !(await held)) return;
    }
    if (!(await this.workspace.open())) return;
    if (run.sessionId && this.claimed.previousStatus === "running" && this.definition.onInterrupt === "interrupt") {
      // The turn ends where it was cut, unreplayed: its journal entries are not a divergence.
      this.cursor.skipToEnd();
      this.end({
        kind: "complete",
        result: {
          ok: false,
          error: new SteadError("STEAD_TURN_INTERRUPTED", `turn ${run.turn ?? "?"} of session ${run.sessionId} was cut off by a crash; its agent's policy is "interrupt", so it is not replayed`, {
            runId: run.id,
            fix: "send the input again as a new turn if it still matters, or set onInterrupt: \"resume\"",
          }),
        },
      });
      return;
    }
    const input: unknown = decodePayload(run.input);
    let value: unknown;
    try {
      const body = portedBody(this.definition);
      // The declared schema parses the input again on every replay: the same input and the same
      // code (the fingerprint held) give the same value. Where the run's input was checked only
      // against the announced JSON Schema (a start by name), this is where the schema has its say.
      value = body
        ? await body(this.ctx, input, enginePort(this.parts))
        : await this.definition.fn(
            this.ctx,
            this.definition.input ? await checkedInput(this.definition, input, { runId: run.id, fix: `start a new run with an input that matches the schema of ${run.definition}` }) : input,
          );
    } catch (e) {
      this.end({ kind: "complete", result: { ok: false, error: e } });
      return;
    }
    this.end({ kind: "complete", result: { ok: true, value } });
  }

  /** A commit reported a pause request: no new ctx call starts now, and the pause is claimed on the next turn. */
  private pauseRequested(): void {
    this.life.move({ kind: "pause-requested" });
    setImmediate(() => this.end({ kind: "pause" }));
  }

  /**
   * Claims how the execution ends: the first claim wins and later ones are dropped. The ending's
   * write waits for in-flight steps to settle, and is skipped if the execution finished meanwhile.
   */
  private end(ending: Ending): void {
    if (!this.life.endable) return;
    this.life.move({ kind: "ending", ending });
    void (async () => {
      await settleAll(this.inFlight);
      if (this.life.finished) return;
      this.finish(await writeEnding(ending, this.endingParts));
    })().catch((e: unknown) => this.finish({ kind: "aborted", error: errorMessage(e) }));
  }

  /** The first outcome wins: an abort racing the ending's own write is dropped, or drops it. */
  private finish(outcome: ExecutionOutcome): void {
    if (this.life.finished) return;
    this.life.move({ kind: "finished", outcome });
    this.ended.abort();
    this.workspace.close();
    this.resolveDone(outcome);
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inFlight.add(p);
    const remove = () => this.inFlight.delete(p);
    p.then(remove, remove);
    return p;
  }
}

async function settleAll(set: Set<Promise<unknown>>): Promise<void> {
  while (set.size > 0) await Promise.allSettled([...set]);
}
