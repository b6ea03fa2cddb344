/**
 * Control commands: each one call of the control API, with the caller as `by` and an optional
 * `idempotencyKey`, so a retried call returns the first one's result (`already: true`) and
 * changes nothing. Arguments are the HTTP API's request bodies (schemas.ts) with the ids beside.
 */
import { z } from "zod";
import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import { cancelBody, decision, denial, forkBody, releaseBody, resumeBody, runWait, signalBody } from "../../schemas.js";
import { cancelResult, decisionResult, forkResult, pauseResult, releaseResult, resumeResult, retryResult, signalResult } from "../outputs.js";
import { tool } from "../tool-table.js";
import { runArg } from "./reads.js";

export const idempotencyKey = z
  .string()
  .min(1)
  .max(200)
  .optional()
  .describe("makes the call safe to retry: a repeat with this key returns the first result and changes nothing (1-200 printable characters, the same for every retry)");

const waitArgs = { runId: runArg, wait: runWait.shape.wait.describe("the wait's name (see get_run's waits, or why)"), idempotencyKey };
const runArgs = { runId: runArg, idempotencyKey };

const keyed = (by: string | null, key: string | undefined) => ({ by, ...(key === undefined ? {} : { idempotencyKey: key }) });
/** Only the options given: an absent one takes the control API's default. */
const given = <T extends Record<string, unknown>>(o: T): Partial<T> => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

/**
 * `destructive`: the call lets a run go on to act on the world (or ends work); otherwise it only
 * records. `idempotent`: repeating it with the same arguments, even with no key, changes nothing more.
 */
const control = (destructive: boolean, idempotent: boolean): ToolAnnotations => ({ readOnlyHint: false, destructiveHint: destructive, idempotentHint: idempotent, openWorldHint: false });

export const CONTROL_TOOLS = [
  tool({
    name: "approve",
    title: "Approve what a run waits for",
    description:
      "Approve an approval a run waits for; the run then resumes by itself and does what was asked. For a tool call, `input` replaces its arguments (checked against the tool's schema) and `scope: \"run\"` approves that tool for the rest of the run. The same decision again succeeds; a different one is refused naming the first.",
    action: "waits.approve",
    input: z
      .object({
        ...waitArgs,
        reason: decision.shape.reason.describe("why (recorded)"),
        input: decision.shape.input.describe("a tool call's edited arguments"),
        scope: decision.shape.scope.describe("once (default) or run: the tool is approved for the rest of the run"),
      })
      .strict(),
    output: decisionResult,
    annotations: control(true, true),
    handle: ({ stead, args, by }) => stead.runs.approve(args.runId, args.wait, { ...keyed(by, args.idempotencyKey), ...given({ reason: args.reason, input: args.input, scope: args.scope }) }),
  }),
  tool({
    name: "deny",
    title: "Deny what a run waits for",
    description: "Deny an approval a run waits for; the run resumes with the denial (a denied tool call is answered to the model as denied). The same decision again succeeds; a different one is refused.",
    action: "waits.deny",
    input: z.object({ ...waitArgs, reason: denial.shape.reason.describe("why (recorded, and told to the model for a tool call)") }).strict(),
    output: decisionResult,
    annotations: control(false, true),
    handle: ({ stead, args, by }) => stead.runs.deny(args.runId, args.wait, { ...keyed(by, args.idempotencyKey), ...given({ reason: args.reason }) }),
  }),
  tool({
    name: "signal",
    title: "Send a signal a run waits for",
    description: "Deliver the signal a run waits for, with its payload; the run resumes with it. The same payload again succeeds; another is refused.",
    action: "waits.signal",
    input: z.object({ ...waitArgs, payload: signalBody.shape.payload.describe("any JSON value the run receives") }).strict(),
    output: signalResult,
    annotations: control(true, true),
    handle: ({ stead, args, by }) => stead.runs.signal(args.runId, args.wait, args.payload ?? null, keyed(by, args.idempotencyKey)),
  }),
  tool({
    name: "release",
    title: "Release a hold",
    description:
      "Release a run's hold by one of its ways out (see why): retry (run the step again), skip (go on without its outcome), result (supply the step's outcome in `result`), accept-change (run on under the changed definition). `hold`: the hold's id or kind; absent: the run's one open hold.",
    action: "holds.release",
    input: z
      .object({
        ...runArgs,
        hold: releaseBody.shape.hold.describe("the hold's id or kind (default: the run's one open hold)"),
        choice: releaseBody.shape.choice.describe("the way out"),
        result: releaseBody.shape.result.describe("choice result: the step's outcome"),
      })
      .strict(),
    output: releaseResult,
    annotations: control(true, true),
    handle: ({ stead, args, by }) => stead.runs.release(args.runId, args.hold, { ...keyed(by, args.idempotencyKey), choice: args.choice, ...given({ result: args.result }) }),
  }),
  tool({
    name: "pause",
    title: "Pause a run",
    description: "Pause a run: parked now if pending or waiting, after its current step if running. Resume it with resume.",
    action: "runs.pause",
    input: z.object(runArgs).strict(),
    output: pauseResult,
    annotations: control(false, true),
    handle: ({ stead, args, by }) => stead.runs.pause(args.runId, keyed(by, args.idempotencyKey)),
  }),
  tool({
    name: "resume",
    title: "Resume a run",
    description: "Resume a paused run, or a cancelled one from its last completed step (with the children cancelled with it); `acceptChange`: release a definition_changed hold by running on under the new code.",
    action: "runs.resume",
    input: z.object({ ...runArgs, acceptChange: resumeBody.shape.acceptChange.describe("run on under a changed definition") }).strict(),
    output: resumeResult,
    annotations: control(true, false),
    handle: ({ stead, args, by }) => stead.runs.resume(args.runId, { ...keyed(by, args.idempotencyKey), ...given({ acceptChange: args.acceptChange }) }),
  }),
  tool({
    name: "cancel",
    title: "Cancel a run",
    description: "Cancel a run that has not ended, and its unfinished children. Nothing is deleted: resume brings them back.",
    action: "runs.cancel",
    input: z.object({ ...runArgs, reason: cancelBody.shape.reason.describe("why (recorded)") }).strict(),
    output: cancelResult,
    annotations: control(true, true),
    handle: ({ stead, args, by }) => stead.runs.cancel(args.runId, { ...keyed(by, args.idempotencyKey), ...given({ reason: args.reason }) }),
  }),
  tool({
    name: "retry",
    title: "Retry a failed run",
    description: "Give a failed run's failed step a new attempt, once its cause is fixed; nothing before it runs again.",
    action: "runs.retry",
    input: z.object(runArgs).strict(),
    output: retryResult,
    annotations: control(true, false),
    handle: ({ stead, args, by }) => stead.runs.retry(args.runId, keyed(by, args.idempotencyKey)),
  }),
  tool({
    name: "fork",
    title: "Fork a run",
    description: "Fork a run: a new run of the same definition that reuses its journal up to a step (default: its last completed one) and runs on from there under the current code.",
    action: "runs.fork",
    input: z.object({ ...runArgs, at: forkBody.shape.at.describe("reuse the journal up to and including this step"), id: forkBody.shape.id.describe("the new run's id (default: a fresh one)") }).strict(),
    output: forkResult,
    annotations: control(false, false),
    handle: ({ stead, args, by }) => stead.runs.fork(args.runId, { ...keyed(by, args.idempotencyKey), ...given({ at: args.at, id: args.id }) }),
  }),
];
