/**
 * Named crash points for crash tests. With STEAD_CRASH_AT=<point>[:<stepId>] in the environment,
 * the process signals itself the first time (or the STEAD_CRASH_HIT-th time) it passes that point:
 * SIGKILL, or the signal STEAD_CRASH_SIGNAL names (SIGSTOP freezes it there, as a stalled VM or a
 * long GC pause would, until a test sends SIGCONT). Unset (the normal case), a crash point costs
 * one branch.
 *
 * Points: before-intent, after-intent, after-effect, after-commit, mid-group-commit, before-step
 * (right before the lease check that precedes every step function and intent), and two that name
 * no step: after-claim (a claim came back with runs, before any of them starts) and after-renewal
 * (a renewal that lease check asked for came back renewed, before the worker acts on the answer).
 */
export type CrashPoint = "before-intent" | "after-intent" | "after-effect" | "after-commit" | "mid-group-commit" | "before-step" | "after-claim" | "after-renewal";

const spec = process.env.STEAD_CRASH_AT;
const [wantPoint, wantStep] = spec ? (spec.includes(":") ? [spec.slice(0, spec.indexOf(":")), spec.slice(spec.indexOf(":") + 1)] : [spec, undefined]) : [undefined, undefined];
let remaining = Number(process.env.STEAD_CRASH_HIT ?? "1");
const signal: NodeJS.Signals = process.env.STEAD_CRASH_SIGNAL === "SIGSTOP" ? "SIGSTOP" : "SIGKILL";

/** Whether `point` is armed in this process: hooks that exist only to host it can be left out otherwise. */
export function crashPointArmed(point: CrashPoint): boolean {
  return wantPoint === point;
}

export function crashPoint(point: CrashPoint, stepIds: readonly string[]): void {
  if (wantPoint === undefined || point !== wantPoint) return;
  if (wantStep !== undefined && !stepIds.includes(wantStep)) return;
  remaining -= 1;
  if (remaining !== 0) return;
  process.kill(process.pid, signal);
}
