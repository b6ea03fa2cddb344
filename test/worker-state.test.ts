import { afterEach, describe, expect, it, vi } from "vitest";
import { workflow } from "../src/index.js";
import { WORKER_TRANSITIONS, WorkerLifecycle, type WorkerState, type WorkerStateKind } from "../src/worker/worker-state.js";
import { steadHarness } from "./helpers/temp-store.js";
import { transitionTableCases } from "./helpers/transition-table.js";

const SAMPLE: { [K in WorkerStateKind]: Extract<WorkerState, { kind: K }> } = {
  initialized: { kind: "initialized" },
  running: { kind: "running" },
  stopping: { kind: "stopping" },
  draining: { kind: "draining", graceMs: 100 },
  drained: { kind: "drained" },
  stopped: { kind: "stopped", forced: false },
  failed: { kind: "failed", error: new Error("store lost") },
};
const KINDS = Object.keys(SAMPLE) as WorkerStateKind[];
const PATH: Record<WorkerStateKind, WorkerStateKind[]> = {
  initialized: [],
  running: ["running"],
  stopping: ["running", "stopping"],
  draining: ["running", "stopping", "draining"],
  drained: ["running", "stopping", "draining", "drained"],
  stopped: ["running", "stopped"],
  failed: ["running", "failed"],
};

/** A lifecycle brought to `kind` by legal moves only. */
function at(kind: WorkerStateKind): WorkerLifecycle {
  const life = new WorkerLifecycle();
  for (const k of PATH[kind]) life.move(SAMPLE[k]);
  expect(life.current.kind).toBe(kind);
  return life;
}

describe("the worker's transition table", () => {
  it("lists exactly these transitions, each with its reason", () => {
    const legal = KINDS.flatMap((from) => Object.keys(WORKER_TRANSITIONS[from]).map((to) => `${from} -> ${to}`));
    expect(legal.sort()).toEqual(
      [
        "initialized -> running",
        "initialized -> stopping",
        "initialized -> stopped",
        "running -> stopping",
        "running -> stopped",
        "running -> failed",
        "stopping -> draining",
        "stopping -> stopped",
        "stopping -> failed",
        "draining -> drained",
        "draining -> stopped",
        "draining -> failed",
        "drained -> stopped",
        "drained -> failed",
      ].sort(),
    );
    for (const from of KINDS) for (const reason of Object.values(WORKER_TRANSITIONS[from])) expect(reason?.length ?? 0).toBeGreaterThan(5);
  });

  transitionTableCases<WorkerStateKind, WorkerState>({ table: WORKER_TRANSITIONS, what: "a worker", samples: SAMPLE, at, refusals: 7 * 7 - 14 });

  it("refuses every other transition with an internal error, and stays where it was", () => {
    let refused = 0;
    for (const from of KINDS) {
      for (const to of KINDS) {
        if (WORKER_TRANSITIONS[from][to] !== undefined) continue;
        const life = at(from);
        expect(() => life.move(SAMPLE[to]), `${from} -> ${to}`).toThrow(`internal: a worker cannot go from ${from} to ${to}`);
        expect(life.current.kind).toBe(from);
        refused++;
      }
    }
    expect(refused).toBe(7 * 7 - 14);
  });

  it("claims only while running; stopped and failed are the ends; moveFrom moves only from the state it names", () => {
    expect(KINDS.filter((k) => at(k).claims)).toEqual(["running"]);
    expect(KINDS.filter((k) => at(k).ended)).toEqual(["stopped", "failed"]);
    const life = at("stopped");
    expect(life.moveFrom("drained", SAMPLE.stopped)).toBe(false);
    expect(life.current.kind).toBe("stopped");
    const draining = at("draining");
    expect(draining.moveFrom("draining", SAMPLE.drained)).toBe(true);
    expect(draining.current.kind).toBe("drained");
  });
});

describe("workers walk the table", () => {
  const h = steadHarness();
  afterEach(() => {
    vi.restoreAllMocks();
    return h.cleanup();
  });

  /** A reader of the moves every lifecycle makes from now on (the spy calls through to the real move). */
  function record(): () => string[] {
    const spy = vi.spyOn(WorkerLifecycle.prototype, "move");
    return () => spy.mock.calls.map(([to]: [WorkerState]) => to.kind === "stopped" ? `stopped${to.forced ? " (forced)" : ""}` : to.kind);
  }

  /** A run whose one step holds until `release()`, and a promise of the step having started. */
  function gated(name: string) {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let inStep!: () => void;
    const entered = new Promise<void>((r) => (inStep = r));
    const wf = workflow(name, async (ctx) =>
      ctx.step("a", async () => {
        inStep();
        await gate;
        return 1;
      }),
    );
    return { wf, entered, release };
  }

  it("a graceful stop with a step in flight: stopping, draining, drained, stopped; the step commits and the run is handed back", async () => {
    const { wf, entered, release } = gated("worker-state-graceful");
    const stead = h.create();
    const { id } = await stead.runs.start(wf, null);
    const moves = record();
    const w = h.worker(stead, { definitions: [wf], graceMs: 10_000 }).start();
    const outcome = new Promise<string>((r) => w.on("outcome", (_, o) => r(o.kind)));
    await entered;
    const stopped = w.stop();
    await vi.waitFor(() => expect(moves()).toContain("draining"));
    release();
    await stopped;
    expect(await outcome).toBe("released");
    expect(moves()).toEqual(["running", "stopping", "draining", "drained", "stopped"]);
    const journal = await stead.store.journal(id);
    expect(journal.map((s) => [s.stepId, s.status])).toEqual([["a", "completed"]]);
  });

  it("abortAll() during a graceful stop ends it forced; the stop finishes without moving the state again", async () => {
    const { wf, entered } = gated("worker-state-forced");
    const stead = h.create();
    await stead.runs.start(wf, null);
    const moves = record();
    const w = h.worker(stead, { definitions: [wf], graceMs: 10_000 }).start();
    await entered;
    const stopped = w.stop();
    await vi.waitFor(() => expect(moves()).toContain("draining"));
    w.abortAll();
    await stopped;
    expect(moves()).toEqual(["running", "stopping", "draining", "stopped (forced)"]);
    w.abortAll();
    await w.stop();
    w.start();
    expect(moves()).toEqual(["running", "stopping", "draining", "stopped (forced)"]);
  });
});
