/**
 * Named crash points for crash tests. With STEAD_CRASH_AT=<point>[:<stepId>] in the environment,
 * the process SIGKILLs itself the first time (or the STEAD_CRASH_HIT-th time) it passes that point.
 * Unset (the normal case), a crash point costs one branch.
 *
 * Points: before-intent, after-intent, after-effect, after-commit, mid-group-commit.
 */
export type CrashPoint = "before-intent" | "after-intent" | "after-effect" | "after-commit" | "mid-group-commit";

const spec = process.env.STEAD_CRASH_AT;
const [wantPoint, wantStep] = spec ? (spec.includes(":") ? [spec.slice(0, spec.indexOf(":")), spec.slice(spec.indexOf(":") + 1)] : [spec, undefined]) : [undefined, undefined];
let remaining = Number(process.env.STEAD_CRASH_HIT ?? "1");

/** Whether `point` is armed in this process: hooks that exist only to host it can be left out otherwise. */
export function crashPointArmed(point: CrashPoint): boolean {
  return wantPoint === point;
}

export function crashPoint(point: CrashPoint, stepIds: readonly string[]): void {
  if (wantPoint === undefined || point !== wantPoint) return;
  if (wantStep !== undefined && !stepIds.includes(wantStep)) return;
  remaining -= 1;
  if (remaining > 0) return;
  process.kill(process.pid, "SIGKILL");
}
