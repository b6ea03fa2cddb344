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
    this.end({ kind: "park", waits: [{ wait, isNew }], newRuns });
    return never();
  }
}

/**
 * The write that parks the run in its waits, opening the new ones; each one open already is
 * expected still open (a mutation of its own in the same unit: all or nothing).
 */
export function parkWrite(e: Extract<Ending, { kind: "park" }>): { m: Omit<Mutation, "runId" | "expect">; expect: Mutation["expect"]; stillOpen: string[] } {
  const { waits, newRuns } = e;
  const opened = waits.filter((w) => w.isNew).map((w) => w.wait);
  const stillOpen = waits.filter((w) => !w.isNew).map((w) => w.wait.name);
  const [first, ...more] = stillOpen;
  return {
    m: {
      run: { status: "waiting", releaseLease: true, lostClaims: 0 },
      ...(opened.length
        ? {
            steps: opened.map((w) => ({ seq: w.seq, stepId: w.stepId, kind: w.stepKind, status: "waiting" as const, attempt: 1, output: null, startedAt: Date.now() })),
            waits: opened.map((w) => ({ name: w.name, kind: w.kind, seq: w.seq, request: w.request ?? null, requestKind: w.requestKind ?? null, wakeAt: w.wakeAt ?? null })),
          }
        : {}),
      ...(newRuns.length ? { newRuns } : {}),
      events: [
        ...opened.map((w) => ({ type: "wait.opened", data: { wait: w.name, kind: w.kind, wakeAt: w.wakeAt ?? null } })),
        ...waits.map(({ wait: w }) => ({ type: "run.waiting", data: { wait: w.name, kind: w.kind } })),
        ...newRuns.map((r) => ({ type: "child.started", data: { child: r.id, definition: r.definition } })),
      ],
    },
    expect: first === undefined ? {} : { openWait: first },
    stillOpen: more,
  };
}
