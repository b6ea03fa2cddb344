/**
 * `why`'s ways out as the CLI prints them (`stead why`, and a foreground run that parks): every
 * branch of the explanation, rendered from the engine's structured ways out, is the exact line
 * the CLI printed when the engine wrote the commands itself. Ids, names and paths that need shell
 * quoting are among them.
 */
import { describe, expect, it } from "vitest";
import { explain } from "../src/engine/runs/why.js";
import type { HoldKind, HoldRow, RunRow, RunStatus, StepRow, WaitKind, WaitRow } from "../src/store/types.js";
import { whyJson, wayOutLines } from "../src/cli/ways-out.js";

const NOW = 1_700_000_000_000;

function run(status: RunStatus, extra: Partial<RunRow> = {}): RunRow {
  return {
    id: "r-1",
    definition: "triage",
    module: "/srv/app/triage.ts",
    fingerprint: "f",
    status,
    input: "null",
    output: null,
    error: null,
    parentId: null,
    parentStepId: null,
    fence: 2,
    leaseOwner: status === "running" ? "w-1" : null,
    leaseExpiresAt: status === "running" ? NOW + 20_000 : null,
    ownerHost: status === "running" ? "box" : null,
    ownerPid: status === "running" ? 42 : null,
    ownerStart: null,
    lostClaims: 0,
    pauseRequested: false,
    sessionId: null,
    turn: null,
    workspace: null,
    outputRefs: null,
    createdAt: NOW - 60_000,
    updatedAt: NOW - 30_000,
    ...extra,
  };
}

const step = (seq: number, stepId: string): StepRow => ({
  runId: "r-1",
  seq,
  stepId,
  kind: "step",
  status: "completed",
  attempt: 1,
  output: "1",
  error: null,
  startedAt: NOW - 50_000,
  completedAt: NOW - 49_000,
  checkpoint: null,
});

const wait = (kind: WaitKind, name: string, extra: Partial<WaitRow> = {}): WaitRow => ({
  runId: "r-1",
  name,
  kind,
  status: "open",
  seq: 1,
  request: null,
  requestKind: null,
  wakeAt: null,
  result: null,
  createdAt: NOW - 10_000,
  resolvedAt: null,
  resolvedBy: null,
  ...extra,
});

let holdId = 0;
const hold = (kind: HoldKind, details: Record<string, unknown> = {}): HoldRow => ({
  id: ++holdId,
  runId: "r-1",
  kind,
  stepId: "s",
  seq: 1,
  reason: `${kind} happened`,
  details: JSON.stringify(details),
  status: "open",
  choice: null,
  createdAt: NOW - 5_000,
  releasedAt: null,
  releasedBy: null,
});

const journal = [step(0, "fetch")];
const lines = (r: RunRow, waits: WaitRow[] = [], holds: HoldRow[] = [], gone = false) => wayOutLines(explain(r, journal, waits, holds, NOW, gone));

describe("why's ways out, as the CLI prints them", () => {
  it("pending and running runs", () => {
    expect(lines(run("pending"))).toEqual(["  start a worker: stead worker /srv/app/triage.ts"]);
    expect(lines(run("pending", { module: "/srv/my app/triage.ts" }))).toEqual(["  start a worker: stead worker '/srv/my app/triage.ts'"]);
    expect(lines(run("pending", { module: null }))).toEqual(["  start a worker: stead worker <file exporting triage>"]);
    expect(lines(run("running"))).toEqual(["  follow it: stead logs r-1 -f", "  pause it after the current step: stead pause r-1"]);
    expect(lines(run("running"), [], [], true)).toEqual(["  start a worker: stead worker /srv/app/triage.ts"]);
  });

  it("waiting runs: approvals (of tool calls too), signals, timers, quota parks and children", () => {
    expect(lines(run("waiting"), [wait("approval", "ship")])).toEqual([
      '  approve "ship": stead approve r-1 ship',
      '  deny "ship": stead deny r-1 ship --reason "..."',
      "  cancel it: stead cancel r-1",
    ]);
    const call = JSON.stringify({ tool: "deploy", toolCallId: "c1", input: { env: "prod" }, fingerprint: "fp" });
    expect(lines(run("waiting", { id: "it's 1" }), [wait("approval", "approve:c1", { request: call })])).toEqual([
      `  approve "approve:c1": stead approve 'it'\\''s 1' approve:c1`,
      `  deny "approve:c1": stead deny 'it'\\''s 1' approve:c1 --reason "..."`,
      `  approve it with edited arguments: stead approve 'it'\\''s 1' approve:c1 --edit '<json>'`,
      `  approve deploy for the rest of the run: stead approve 'it'\\''s 1' approve:c1 --scope run`,
      `  cancel it: stead cancel 'it'\\''s 1'`,
    ]);
    expect(lines(run("waiting"), [wait("signal", "go ahead")])).toEqual([
      `  send signal "go ahead": stead signal r-1 'go ahead' '<json>'`,
      "  cancel it: stead cancel r-1",
    ]);
    expect(lines(run("waiting", { module: null }), [wait("timer", "nap", { wakeAt: NOW + 5_000 }), wait("quota", "model-1.quota", { wakeAt: NOW + 9_000, request: '{"model":"m"}' })])).toEqual([
      "  make sure a worker runs: stead worker <file exporting triage>",
      "  cancel it: stead cancel r-1",
    ]);
    expect(lines(run("waiting"), [wait("child", "child:a", { request: '{"child":"r-1/a b"}' })])).toEqual([
      "  inspect child r-1/a b: stead why 'r-1/a b'",
      "  make sure a worker runs: stead worker /srv/app/triage.ts",
      "  cancel it: stead cancel r-1",
    ]);
  });

  it("held runs: every hold's choices, forks where the code changed, and a full store", () => {
    expect(lines(run("held"), [], [hold("storage", { since: NOW - 1000, error: "disk full" })])).toEqual([
      "  free space where the store lives (or raise its size limit); nothing else is needed: stead worker /srv/app/triage.ts",
      "  resume it now, once space is back (refused while the store is still full): stead release r-1 storage --choice retry",
      "  cancel it: stead cancel r-1",
    ]);
    expect(lines(run("held"), [], [hold("ambiguous_effect"), hold("definition_changed"), hold("nondeterminism"), hold("process_failed"), hold("recovery_gap")])).toEqual([
      "  run the effect again as a new attempt (same idempotency key): stead release r-1 ambiguous_effect --choice retry",
      '  record the step as "interrupted: outcome unknown" and go on (the step throws STEAD_OUTCOME_UNKNOWN): stead release r-1 ambiguous_effect --choice skip',
      "  record the result you supply as the step's outcome (you checked what happened): stead release r-1 ambiguous_effect --choice result --result '<json>'",
      "  resume under the code as now deployed (after reverting it to the recorded fingerprint): stead release r-1 definition_changed --choice retry",
      "  accept the changed code for this run and resume it: stead release r-1 definition_changed --choice accept-change",
      "  run it again from its journal under the new code, as a new run: stead fork r-1",
      "  replay again with the code as now deployed (after fixing the divergence): stead release r-1 nondeterminism --choice retry",
      "  keep the journal up to the divergence in a new run under the new code: stead fork r-1",
      "  claim the run again (after fixing what killed the process): stead release r-1 process_failed --choice retry",
      "  resume the run, accepting the gap: stead release r-1 recovery_gap --choice retry",
      "  cancel it: stead cancel r-1",
    ]);
  });

  it("paused, completed, failed and cancelled runs", () => {
    expect(lines(run("paused"))).toEqual(["  resume it: stead resume r-1", "  cancel it: stead cancel r-1"]);
    expect(lines(run("completed"))).toEqual(["  see its output: stead status r-1"]);
    expect(lines(run("failed", { error: JSON.stringify({ message: "boom", stepId: "fetch" }) }))).toEqual([
      '  give step "fetch" a new attempt once its cause is fixed: stead retry r-1',
      "  rerun it under the current code, reusing completed steps: stead fork r-1",
    ]);
    expect(lines(run("failed", { error: JSON.stringify({ message: "boom" }) }))[0]).toBe("  give its failed step a new attempt once its cause is fixed: stead retry r-1");
    expect(lines(run("cancelled"))).toEqual([
      "  resume it from its last completed step (with the children cancelled with it): stead resume r-1",
      "  run it again from its journal as a new run: stead fork r-1",
    ]);
  });

  it("`why --json` keeps its shape: the text and each way out's command", () => {
    const e = explain(run("paused"), journal, [], [], NOW);
    expect(JSON.stringify(whyJson(e))).toBe(
      JSON.stringify({
        runId: "r-1",
        status: "paused",
        text: e.text,
        commands: [
          { what: "resume it", command: "stead resume r-1" },
          { what: "cancel it", command: "stead cancel r-1" },
        ],
      }),
    );
  });
});
