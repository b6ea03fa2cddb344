/**
 * Control commands: each one call of the control API, with the token's name as `by` and the
 * `Idempotency-Key` header as its key, so a retried request returns the first one's result
 * (`already: true`) and changes nothing.
 */
import { route } from "../route-table.js";
import { cancelBody, decision, denial, forkBody, noBody, releaseBody, resumeBody, runId, runWait, signalBody } from "../schemas.js";

const keyed = (actor: string | null, idempotencyKey: string | undefined) => ({ by: actor, ...(idempotencyKey === undefined ? {} : { idempotencyKey }) });

export const CONTROL = [
  route({
    method: "POST",
    path: "/runs/:runId/waits/:wait/approve",
    summary: "Approve what a run waits for (a tool call's arguments may be edited: validated against the tool's schema)",
    tag: "control",
    action: "waits.approve",
    idempotent: true,
    params: runWait,
    body: decision,
    handle: ({ stead, params, body, actor, idempotencyKey }) =>
      stead.runs.approve(params.runId, params.wait, {
        ...keyed(actor, idempotencyKey),
        ...(body.reason === undefined ? {} : { reason: body.reason }),
        ...(body.input === undefined ? {} : { input: body.input }),
        ...(body.scope === undefined ? {} : { scope: body.scope }),
      }),
  }),
  route({
    method: "POST",
    path: "/runs/:runId/waits/:wait/deny",
    summary: "Deny what a run waits for",
    tag: "control",
    action: "waits.deny",
    idempotent: true,
    params: runWait,
    body: denial,
    handle: ({ stead, params, body, actor, idempotencyKey }) => stead.runs.deny(params.runId, params.wait, { ...keyed(actor, idempotencyKey), ...(body.reason === undefined ? {} : { reason: body.reason }) }),
  }),
  route({
    method: "POST",
    path: "/runs/:runId/waits/:wait/signal",
    summary: "Send the signal a run waits for, with its payload",
    tag: "control",
    action: "waits.signal",
    idempotent: true,
    params: runWait,
    body: signalBody,
    handle: ({ stead, params, body, actor, idempotencyKey }) => stead.runs.signal(params.runId, params.wait, body.payload ?? null, keyed(actor, idempotencyKey)),
  }),
  route({
    method: "POST",
    path: "/runs/:runId/release",
    summary: "Release a hold with one of its choices (retry, skip, result, accept-change)",
    tag: "control",
    action: "holds.release",
    idempotent: true,
    params: runId,
    body: releaseBody,
    handle: ({ stead, params, body, actor, idempotencyKey }) =>
      stead.runs.release(params.runId, body.hold, { ...keyed(actor, idempotencyKey), choice: body.choice, ...(body.result === undefined ? {} : { result: body.result }) }),
  }),
  route({
    method: "POST",
    path: "/runs/:runId/pause",
    summary: "Pause a run after its current step",
    tag: "control",
    action: "runs.pause",
    idempotent: true,
    params: runId,
    body: noBody,
    handle: ({ stead, params, actor, idempotencyKey }) => stead.runs.pause(params.runId, keyed(actor, idempotencyKey)),
  }),
  route({
    method: "POST",
    path: "/runs/:runId/resume",
    summary: "Resume a paused or held run (acceptChange: run it under a changed definition)",
    tag: "control",
    action: "runs.resume",
    idempotent: true,
    params: runId,
    body: resumeBody,
    handle: ({ stead, params, body, actor, idempotencyKey }) => stead.runs.resume(params.runId, { ...keyed(actor, idempotencyKey), ...(body.acceptChange === undefined ? {} : { acceptChange: body.acceptChange }) }),
  }),
  route({
    method: "POST",
    path: "/runs/:runId/retry",
    summary: "Retry a failed run from its failed step",
    tag: "control",
    action: "runs.retry",
    idempotent: true,
    params: runId,
    body: noBody,
    handle: ({ stead, params, actor, idempotencyKey }) => stead.runs.retry(params.runId, keyed(actor, idempotencyKey)),
  }),
  route({
    method: "POST",
    path: "/runs/:runId/cancel",
    summary: "Cancel a run that has not ended",
    tag: "control",
    action: "runs.cancel",
    idempotent: true,
    params: runId,
    body: cancelBody,
    handle: ({ stead, params, body, actor, idempotencyKey }) => stead.runs.cancel(params.runId, { ...keyed(actor, idempotencyKey), ...(body.reason === undefined ? {} : { reason: body.reason }) }),
  }),
  route({
    method: "POST",
    path: "/runs/:runId/fork",
    summary: "Fork a run: a new run with its journal up to a step (default: its last completed one)",
    tag: "control",
    action: "runs.fork",
    idempotent: true,
    params: runId,
    body: forkBody,
    handle: ({ stead, params, body, actor, idempotencyKey }) =>
      stead.runs.fork(params.runId, { ...keyed(actor, idempotencyKey), ...(body.at === undefined ? {} : { at: body.at }), ...(body.id === undefined ? {} : { id: body.id }) }),
  }),
];
