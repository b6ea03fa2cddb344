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
  Stead.EventStreamPage,
  Stead.Decision,
  Stead.DecisionResult,
  Stead.ControlOptions,
  Stead.Replayable<Stead.ForkResult>,
  Stead.Explanation,
  Stead.WayOut,
  Stead.WayOutVerb,
  Stead.DefinitionView,
  Stead.StartByNameResult,
  Stead.InputSchema,
  Stead.InputIssue,
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
// @ts-expect-error EventPage is the store's stream read: users read EventStreamPage
export type _EventPage = Stead.EventPage;
// @ts-expect-error EnginePort is the engine's port for the agent loop
export type _EnginePort = Stead.EnginePort;

/** A skin renders a way out by its verb: the union narrows each verb's arguments, and a new verb fails this switch. */
export function verbAndArgs(w: Stead.WayOut): string {
  switch (w.verb) {
    case "worker":
      return w.args.module ?? w.args.definition;
    case "approve":
    case "deny":
      return w.args.wait;
    case "signal":
      return w.args.name;
    case "release":
      return `${w.args.hold} ${w.args.choice}`;
    case "events":
    case "get":
    case "why":
    case "pause":
    case "resume":
    case "retry":
    case "cancel":
    case "fork":
      return w.runId;
    default: {
      const unknown: never = w;
      return unknown;
    }
  }
}

describe("public types", () => {
  it("a decision on a tool approval takes edited arguments and a scope", () => {
    const d: Stead.Decision = { by: "ann", input: { path: "a" }, scope: "run" };
    expect(d.scope).toBe("run");
  });
});
