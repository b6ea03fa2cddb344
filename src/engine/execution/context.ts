import { SteadError } from "../../errors.js";
import type { StreamRedaction } from "../../redaction/stream-redactor.js";
import type { EventWrite, OutputRefField, RunReads, RunRow, SnapshotsAndBlobs, StoreLifecycle } from "../../store/types.js";
import type { ApprovalDecision, Recovery, StepInfo, StepOptions, WorkflowContext } from "../context-types.js";
import type { WorkflowDefinition } from "../definitions/definition.js";
import { parseDuration } from "../durations.js";
import type { EnginePort } from "../port.js";
import { encodePayload } from "../payload.js";
import type { RequestKind } from "../runs/waits.js";
import { childOutcome, childStart, type ChildResult } from "./children.js";
import type { Lifecycle } from "./lifecycle.js";
import { stepScope } from "./step-scope.js";
import { sessionTurns } from "../../store/run-sets.js";
import type { StepRunner } from "./step-runner.js";
import type { WaitSteps } from "./wait-steps.js";
import { never, type FencedWriter } from "./writer.js";

/** The parts of an execution its `ctx` is a view of. */
export interface ContextParts {
  run: RunRow;
  recovery: Recovery;
  /** Aborted when the execution ends for any reason. */
  signal: AbortSignal;
  payloadLimit: number;
  store: RunReads & SnapshotsAndBlobs & StoreLifecycle;
  life: Lifecycle;
  steps: StepRunner;
  waits: WaitSteps;
  writer: FencedWriter;
  track<T>(p: Promise<T>): Promise<T>;
  storeOutputAs(stored: unknown, refs?: readonly OutputRefField[]): void;
  secret(name: string): string;
  redactStream(): StreamRedaction;
  /** The request kind `ctx.approval` records: "code" in a workflow; null (judged by shape) in a ported body (see execution.ts). */
  codeRequestKind: RequestKind | null;
}

/** The engine port handed to a ported body (the agent loop) beside the public ctx: see port.ts. */
export function enginePort(x: ContextParts): EnginePort {
  const runId = x.run.id;
  return {
    run: x.run,
    recovery: x.recovery,
    signal: x.signal,
    payloadLimit: x.payloadLimit,
    step: (id, options, fn) => x.steps.step(id, options, fn),
    quotaPark: (id, wakeAt, request) =>
      x.waits
        .wait<unknown>(id, "quota", () => ({
          wait: { name: id, kind: "quota", seq: 0, wakeAt, request: encodePayload(request, `the quota wait "${id}"`, x.payloadLimit, { runId, stepId: id }) },
        }))
        .then(() => undefined),
    leaseHeld: async () => {
      const held = x.steps.stillHeld();
      if (held !== true && !(await held)) return never();
    },
    emit: (events: EventWrite[]) => {
      if (x.life.finished) return never();
      return x.track(x.writer.write({ events }).then(() => undefined));
    },
    storeOutputAs: (stored: unknown, refs?: readonly OutputRefField[]) => x.storeOutputAs(stored, refs),
    toolApproval: (name, request) => approvalWait<unknown>(x, name, request, "tool-call"),
    errorOutcomes: true,
    redactStream: () => x.redactStream(),
    earlierTurns: async () => {
      const { sessionId, turn } = x.run;
      if (!sessionId || turn === null) return [];
      const runs = (await sessionTurns(x.store, sessionId)).filter((r) => r.turn !== null && r.turn < turn);
      return Promise.all(runs.map(async (r) => ({ run: r, journal: await x.store.journal(r.id) })));
    },
  };
}

/** Parks on an approval whose request is of `requestKind` (engine/runs/waits.ts). */
function approvalWait<T>(x: ContextParts, name: string, request: unknown, requestKind: RequestKind | null): Promise<T> {
  const runId = x.run.id;
  return x.waits.wait<T>(name, "approval", () => ({
    wait: { name, kind: "approval", seq: 0, requestKind, request: encodePayload(request, `the request of approval "${name}"`, x.payloadLimit, { runId, stepId: name }) },
  }));
}

/** The `ctx` a definition's function receives. */
export function publicContext(x: ContextParts): WorkflowContext {
  const runId = x.run.id;
  const limit = x.payloadLimit;
  const ctx: WorkflowContext = {
    runId,
    get idempotencyKey(): string {
      const info = stepScope.getStore();
      if (!info || info.runId !== runId) {
        throw new SteadError("STEAD_INVALID_DEFINITION", "ctx.idempotencyKey is only defined inside a step function", {
          runId,
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
            runId,
            stepId: id,
            fix: "call ctx.step(id, fn) or ctx.step(id, options, fn)",
          }),
        );
      }
      return x.steps.step(id, options, fn);
    },
    secret: (name) => x.secret(name),
    now: () => x.steps.recorded("now", () => Date.now()),
    random: () => x.steps.recorded("random", () => Math.random()),
    sleep: (id, duration) =>
      x.waits.wait<void>(id, "sleep", () => ({ wait: { name: id, kind: "timer", seq: 0, wakeAt: Date.now() + parseDuration(duration, `duration of sleep "${id}"`) } })).then(() => undefined),
    approval: (name, request) => approvalWait<ApprovalDecision>(x, name, request, x.codeRequestKind),
    signal: <T>(name: string) => x.waits.wait<T>(name, "signal", () => ({ wait: { name, kind: "signal", seq: 0 } })),
    agent: <I, O>(id: string, def: WorkflowDefinition<I, O>, input: I) => ctx.child(id, def, input),
    child: <I, O>(id: string, def: WorkflowDefinition<I, O>, input: I) =>
      x.waits.wait<ChildResult<O>>(id, "child", () => childStart(runId, id, def, input, limit)).then((r) => childOutcome(runId, id, r)),
  };
  return ctx;
}
