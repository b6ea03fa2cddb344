/**
 * The public type surface: what a user names is exported; the store's write protocol is not.
 * Checked by `npm run typecheck` (an `@ts-expect-error` that no longer errors fails it); the test
 * below only keeps the file in the suite.
 */
import { describe, expect, it } from "vitest";
import type * as Stead from "../src/index.js";

// The shapes a user names.
export type Kept = [
  Stead.Store,
  Stead.RunStatus,
  Stead.StepKind,
  Stead.StepStatus,
  Stead.WaitKind,
  Stead.WaitStatus,
  Stead.HoldKind,
  Stead.HoldStatus,
  Stead.RunInfo,
  Stead.StepView,
  Stead.WaitView,
  Stead.HoldView,
  Stead.EventView,
  Stead.Decision,
  Stead.DecisionResult,
  Stead.ControlOptions,
  Stead.Replayable<Stead.ForkResult>,
];

// The write protocol, and the store's rows and reads: internal.
// @ts-expect-error Mutation is the store's write protocol
export type _Mutation = Stead.Mutation;
// @ts-expect-error Unit is the store's write protocol
export type _Unit = Stead.Unit;
// @ts-expect-error ClaimRequest is the store's claim protocol
export type _ClaimRequest = Stead.ClaimRequest;
// @ts-expect-error ClaimedRun is the store's claim protocol
export type _ClaimedRun = Stead.ClaimedRun;
// @ts-expect-error StepWrite is the store's write protocol
export type _StepWrite = Stead.StepWrite;
// @ts-expect-error RunRow is a store row: users read RunInfo
export type _RunRow = Stead.RunRow;
// @ts-expect-error EnginePort is the engine's port for the agent loop
export type _EnginePort = Stead.EnginePort;

describe("public types", () => {
  it("a decision on a tool approval takes edited arguments and a scope", () => {
    const d: Stead.Decision = { by: "ann", input: { path: "a" }, scope: "run" };
    expect(d.scope).toBe("run");
  });
});
