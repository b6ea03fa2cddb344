import type { Mutation, StepKind, WaitOpen } from "../../store/types.js";
import { decodePayload } from "../payload.js";
import type { JournalCursor } from "./cursor.js";
import type { Ending, Lifecycle, ParkedWait } from "./lifecycle.js";
import { never } from "./writer.js";

export type WaitStepKind = Extract<StepKind, "sleep" | "approval" | "signal" | "child" | "quota">;

/**
 * The ctx calls that park the run (sleep, approval, signal, child, quota): a completed one returns
 * its recorded answer; otherwise the run parks, its promise never settles, and a later execution
 * replays the answer once the wait is resolved.
 */
export class WaitSteps {
  constructor(
    private readonly life: Lifecycle,
    private readonly cursor: JournalCursor,
    private readonly end: (ending: Ending) => void,
  ) {}

  /** `open` makes the wait (and any run it starts); it is called only when the wait is new. */
  wait<T>(stepId: string, kind: WaitStepKind, open: () => { wait: WaitOpen; newRuns?: Mutation["newRuns"] }): Promise<T> {
    if (!this.life.accepting) return never();
    try {
      this.cursor.checkUnique(stepId);
    } catch (e) {
      return Promise.reject(e instanceof Error ? e : new Error(String(e)));
    }
    const pos = this.cursor.position(stepId, [kind]);
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

  private park(wait: ParkedWait, isNew: boolean, newRuns: NonNullable<Mutation["newRuns"]> = []): Promise<never> {
    this.end({ kind: "park", wait, isNew, newRuns });
    return never();
  }
}

/** The write that parks the run in `wait` (opening it when new). */
export function parkWrite(e: Extract<Ending, { kind: "park" }>): { m: Omit<Mutation, "runId" | "expect">; expect: Mutation["expect"] } {
  const { wait, isNew, newRuns } = e;
  return {
    m: {
      run: { status: "waiting", releaseLease: true, lostClaims: 0 },
      ...(isNew
        ? {
            steps: [{ seq: wait.seq, stepId: wait.stepId, kind: wait.stepKind, status: "waiting", attempt: 1, output: null, startedAt: Date.now() }],
            waits: [{ name: wait.name, kind: wait.kind, seq: wait.seq, request: wait.request ?? null, requestKind: wait.requestKind ?? null, wakeAt: wait.wakeAt ?? null }],
            newRuns,
          }
        : {}),
      events: [
        ...(isNew ? [{ type: "wait.opened", data: { wait: wait.name, kind: wait.kind, wakeAt: wait.wakeAt ?? null } }] : []),
        { type: "run.waiting", data: { wait: wait.name, kind: wait.kind } },
        ...(newRuns.length ? newRuns.map((r) => ({ type: "child.started", data: { child: r.id, definition: r.definition } })) : []),
      ],
    },
    expect: isNew ? {} : { openWait: wait.name },
  };
}
