import { afterEach, describe, expect, it, vi } from "vitest";
import { workflow } from "../src/index.js";
import { EXECUTION_TRANSITIONS, Lifecycle, type ExecutionState, type ExecutionStateKind } from "../src/engine/execution/lifecycle.js";
import { steadHarness } from "./helpers/temp-store.js";
import { transitionTableCases } from "./helpers/transition-table.js";

const SAMPLE: { [K in ExecutionStateKind]: Extract<ExecutionState, { kind: K }> } = {
  running: { kind: "running" },
  "pause-requested": { kind: "pause-requested" },
  ending: { kind: "ending", ending: { kind: "release" } },
  finished: { kind: "finished", outcome: { kind: "completed" } },
};
const KINDS = Object.keys(SAMPLE) as ExecutionStateKind[];

/** A lifecycle brought to `kind` by legal moves only. */
function at(kind: ExecutionStateKind): Lifecycle {
  const life = new Lifecycle();
  const path: Record<ExecutionStateKind, ExecutionStateKind[]> = { running: [], "pause-requested": ["pause-requested"], ending: ["ending"], finished: ["finished"] };
  for (const k of path[kind]) life.move(SAMPLE[k]);
  expect(life.current.kind).toBe(kind);
  return life;
}

describe("the execution's transition table", () => {
  it("lists exactly these transitions, each with its reason", () => {
    const legal = KINDS.flatMap((from) => Object.keys(EXECUTION_TRANSITIONS[from]).map((to) => `${from} -> ${to}`));
    expect(legal.sort()).toEqual(
      [
        "running -> pause-requested",
        "running -> ending",
        "running -> finished",
        "pause-requested -> ending",
        "pause-requested -> finished",
        "ending -> finished",
      ].sort(),
    );
    for (const from of KINDS) for (const reason of Object.values(EXECUTION_TRANSITIONS[from])) expect(reason?.length ?? 0).toBeGreaterThan(10);
  });

  transitionTableCases<ExecutionStateKind, ExecutionState>({ table: EXECUTION_TRANSITIONS, what: "an execution", samples: SAMPLE, at, refusals: 10 });

  it("refuses every other transition with an internal error, and stays where it was", () => {
    let refused = 0;
    for (const from of KINDS) {
      for (const to of KINDS) {
        if (EXECUTION_TRANSITIONS[from][to] !== undefined) continue;
        const life = at(from);
        expect(() => life.move(SAMPLE[to]), `${from} -> ${to}`).toThrow(`internal: an execution cannot go from ${from} to ${to}`);
        expect(life.current.kind).toBe(from);
        refused++;
      }
    }
    // 4 × 4 pairs, 6 legal: self-moves, anything out of finished, and every way back.
    expect(refused).toBe(10);
  });

  it("takes new ctx calls only while running, and an ending until one is claimed", () => {
    const accepting = KINDS.filter((k) => at(k).accepting);
    const endable = KINDS.filter((k) => at(k).endable);
    const finished = KINDS.filter((k) => at(k).finished);
    expect(accepting).toEqual(["running"]);
    expect(endable).toEqual(["running", "pause-requested"]);
    expect(finished).toEqual(["finished"]);
  });
});

describe("executions walk the table", () => {
  const h = steadHarness();
  afterEach(() => {
    vi.restoreAllMocks();
    return h.cleanup();
  });

  /** A reader of the moves every lifecycle makes from now on (the spy calls through to the real move). */
  function record(): () => string[] {
    const spy = vi.spyOn(Lifecycle.prototype, "move");
    return () => spy.mock.calls.map(([to]: [ExecutionState]) => to.kind === "ending" ? `ending:${to.ending.kind}` : to.kind === "finished" ? `finished:${to.outcome.kind}` : to.kind);
  }

  it("a run that completes: ending (complete), then finished", async () => {
    const wf = workflow("lifecycle-complete", async (ctx) => ctx.step("a", () => 1));
    const stead = h.create();
    const { id } = await stead.runs.start(wf, null);
    const moves = record();
    h.worker(stead, { definitions: [wf] }).start();
    expect((await stead.runs.waitFor(id, { timeoutMs: 15_000 })).status).toBe("completed");
    await vi.waitFor(() => expect(moves()).toEqual(["ending:complete", "finished:completed"]));
  });

  it("a pause asked during a step: pause-requested at its commit, then the pause is the ending", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let inStep!: () => void;
    const entered = new Promise<void>((r) => (inStep = r));
    const wf = workflow("lifecycle-pause", async (ctx) => {
      await ctx.step("a", async () => {
        inStep();
        await gate;
        return 1;
      });
      return ctx.step("b", () => 2);
    });
    const stead = h.create();
    const { id } = await stead.runs.start(wf, null);
    const moves = record();
    const w = h.worker(stead, { definitions: [wf] }).start();
    const outcome = new Promise<string>((r) => w.on("outcome", (_, o) => r(o.kind)));
    await entered;
    await stead.runs.pause(id);
    release();
    expect(await outcome).toBe("paused");
    expect(moves()).toEqual(["pause-requested", "ending:pause", "finished:paused"]);
    expect((await stead.runs.get(id)).status).toBe("paused");
  });
});
