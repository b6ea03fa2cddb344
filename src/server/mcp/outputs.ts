/**
 * The shapes the control API returns, as zod schemas for MCP tools' output schemas. Objects are
 * loose: a field the control API adds later reaches the client, and a client checks the fields
 * named here. A payload (a run's input, a step's output, a wait's request) is any JSON, and absent
 * when there is none, so it is optional.
 */
import { z } from "zod";
import { RUN_STATUSES } from "../../store/types.js";

const id = z.string();
const ms = z.number().describe("milliseconds since the epoch");
const payload = z.unknown().optional();

export const errorRecord = z.looseObject({
  name: z.string(),
  message: z.string(),
  code: z.string().optional(),
  fix: z.string().optional().describe("what to check or do"),
  stepId: z.string().optional(),
});

/** A listed row whose sealed values failed to open (changed behind the store's back): the rest is as stored, its sealed values unread. */
const damaged = z
  .looseObject({ code: z.literal("STEAD_DATA_TAMPERED"), message: z.string().describe("names the row") })
  .optional()
  .describe("set in a listing when this row's sealed values failed to open; reading it alone is refused with the code");

export const runInfo = z.looseObject({
  id,
  definition: z.string(),
  status: z.enum(RUN_STATUSES),
  input: payload,
  output: payload,
  error: errorRecord.nullable(),
  parentId: id.nullable(),
  fingerprint: z.string().nullable(),
  module: z.string().nullable(),
  fence: z.number().int().describe("claims so far: grows at every claim"),
  lease: z.looseObject({ owner: z.string(), expiresAt: ms.nullable(), host: z.string().nullable(), pid: z.number().int().nullable() }).nullable(),
  lostClaims: z.number().int(),
  pauseRequested: z.boolean(),
  createdAt: ms,
  updatedAt: ms,
  damaged,
});

export const stepView = z.looseObject({
  seq: z.number().int(),
  id: z.string(),
  kind: z.string(),
  status: z.string(),
  attempt: z.number().int(),
  output: payload,
  error: errorRecord.nullable(),
  startedAt: ms,
  completedAt: ms.nullable(),
});

export const waitView = z.looseObject({
  name: z.string(),
  kind: z.string().describe("approval, signal, timer, quota or child"),
  status: z.string(),
  request: payload,
  wakeAt: ms.nullable(),
  result: payload,
  createdAt: ms,
  resolvedAt: ms.nullable(),
  resolvedBy: z.string().nullable(),
  damaged,
});

export const holdView = z.looseObject({
  id: z.number().int(),
  runId: id,
  kind: z.string().describe("process_failed, ambiguous_effect, definition_changed, nondeterminism, recovery_gap or storage"),
  stepId: z.string().nullable(),
  reason: z.string(),
  details: z.record(z.string(), z.unknown()),
  status: z.string(),
  choice: z.string().nullable(),
  createdAt: ms,
  releasedAt: ms.nullable(),
  releasedBy: z.string().nullable(),
  damaged,
});

export const eventView = z.looseObject({ seq: z.number().int(), runId: id, type: z.string(), at: ms, data: z.record(z.string(), z.unknown()) });

/** A way out of where a run stands, as the tool call that takes it (see ways-out.ts). */
export const wayOut = z.looseObject({
  what: z.string().describe("what taking it does"),
  tool: z.string().nullable().describe("the tool to call; null when no tool takes it (a worker must run where the definition's code is)"),
  arguments: z.record(z.string(), z.unknown()).describe("the arguments known already"),
  supply: z.array(z.string()).describe("arguments of the call only a person can give (approve's input, deny's reason, signal's payload, release's result)"),
});

export const explanation = z.looseObject({
  runId: id,
  status: z.string(),
  text: z.string().describe("where the run is, why, and what happens next"),
  waysOut: z.array(wayOut),
});

export const runInFull = z.looseObject({ run: runInfo, journal: z.array(stepView), waits: z.array(waitView), holds: z.array(holdView), why: explanation });

export const sessionView = z.looseObject({
  id: z.string(),
  definition: z.string(),
  turns: z.number().int(),
  open: z.number().int().describe("turns not yet ended"),
  current: z.looseObject({ runId: id, turn: z.number().int(), status: z.string() }).nullable(),
  last: z.looseObject({ runId: id, turn: z.number().int(), outcome: z.string(), error: z.string().nullable() }).nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  damaged,
});

export const turnTranscript = z.looseObject({
  turn: z.number().int(),
  runId: id,
  status: z.string(),
  outcome: z.string().nullable(),
  queued: z.boolean(),
  error: z.looseObject({ code: z.string().nullable(), message: z.string() }).nullable(),
  entries: z.array(z.looseObject({ type: z.string().describe("user, model, model-call, quota or tool-call") })),
});

const notes = z.looseObject({
  notes: z.array(z.looseObject({ path: z.string(), kind: z.string(), detail: z.string() })),
  more: z.record(z.string(), z.number()).optional(),
});

export const snapshotView = z.looseObject({
  id: z.number().int(),
  runId: id,
  seq: z.number().int().describe("journal position; -1 for the start snapshot"),
  stepId: z.string().nullable(),
  source: z.string().describe("start, step or settle"),
  root: z.string(),
  files: z.number().int(),
  bytes: z.number().int(),
  filesChanged: z.number().int(),
  newBytes: z.number().int(),
  notes: notes.describe("files the snapshot has no content for"),
  checkpoint: z.unknown().optional(),
  createdAt: ms,
});

export const snapshotFile = z.looseObject({
  path: z.string(),
  kind: z.enum(["file", "link"]),
  mode: z.number().int().nullable(),
  size: z.number().int().nullable(),
  hash: z.string().nullable().describe("SHA-256 of the content"),
  target: z.string().nullable().describe("a link's target"),
  encoding: z.enum(["utf8", "base64"]).nullable().describe("null when the content is not given"),
  content: z.string().nullable(),
});

const replay = { already: z.boolean().describe("true: an earlier identical call (or one with this idempotency key) did it; nothing changed now") };

export const decisionResult = z.looseObject({ runId: id, wait: z.string(), approved: z.boolean(), by: z.string().nullable(), at: ms, ...replay });
export const signalResult = z.looseObject({ runId: id, wait: z.string(), by: z.string().nullable(), at: ms, ...replay });
export const pauseResult = z.looseObject({ runId: id, state: z.enum(["paused", "pause-requested"]), ...replay });
export const resumeResult = z.looseObject({ runId: id, from: z.string(), resumed: z.array(id), ...replay });
export const retryResult = z.looseObject({ runId: id, stepId: z.string().nullable(), attempt: z.number().int().nullable(), ...replay });
export const cancelResult = z.looseObject({ runId: id, cancelled: z.array(id), by: z.string().nullable(), at: ms, ...replay });
export const forkResult = z.looseObject({ id: id.describe("the new run"), reused: z.number().int().describe("journal entries reused from the source"), ...replay });
export const sendResult = z.looseObject({ runId: id.describe("the turn's run"), turn: z.number().int().describe("the turn's number in its session"), ...replay });
export const releaseResult = z.looseObject({ ...holdView.shape, ...replay });
