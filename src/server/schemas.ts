/** Request shapes shared by several routes. Ids are checked again by the engine (STEAD_BAD_ID). */
import { z } from "zod";
import { RUN_STATUSES, type WaitKind } from "../store/types.js";
import { JOURNAL_PAGE_MAX } from "../stead/stead.js";

export const runId = z.object({ runId: z.string().min(1).max(200) }).strict();
export const runWait = z.object({ runId: z.string().min(1).max(200), wait: z.string().min(1).max(200) }).strict();

const reason = z.string().max(10_000).nullable().optional();

export const noBody = z.object({}).strict();

export const decision = z
  .object({
    reason,
    /** Tool approvals: the edited arguments, validated against the tool's recorded input schema. */
    input: z.unknown().optional(),
    scope: z.enum(["once", "run"]).optional(),
  })
  .strict();

export const denial = z.object({ reason }).strict();
export const signalBody = z.object({ payload: z.unknown() }).strict();
export const resumeBody = z.object({ acceptChange: z.boolean().optional() }).strict();
export const cancelBody = z.object({ reason: z.string().max(10_000).optional() }).strict();
export const forkBody = z.object({ at: z.string().min(1).max(200).optional(), id: z.string().min(1).max(200).optional() }).strict();
export const releaseBody = z
  .object({
    /** The hold's id or kind; absent: the run's one open hold. */
    hold: z.string().min(1).max(200).optional(),
    choice: z.enum(["retry", "skip", "result", "accept-change"]),
    result: z.unknown().optional(),
  })
  .strict();

const statusList = z
  .string()
  .transform((s) => s.split(","))
  .pipe(z.array(z.enum(RUN_STATUSES)));

export const runList = z
  .object({
    status: statusList.optional(),
    definition: z.string().min(1).max(200).optional(),
    limit: z.coerce.number().int().min(1).max(1000).optional(),
  })
  .strict();

export const eventList = z
  .object({
    after: z.coerce.number().int().min(0).optional(),
    limit: z.coerce.number().int().min(1).max(1000).optional(),
  })
  .strict();

export const holdList = z.object({ runId: z.string().min(1).max(200).optional(), open: z.enum(["true", "false"]).optional() }).strict();

/** `GET /runs/:runId`: `journal=false` answers without the journal (and with its length). */
export const runDetail = z.object({ journal: z.enum(["true", "false"]).optional() }).strict();

export const journalPage = z
  .object({
    offset: z.coerce.number().int().min(0).optional(),
    limit: z.coerce.number().int().min(1).max(JOURNAL_PAGE_MAX).optional(),
    step: z.string().min(1).max(1000).optional(),
  })
  .strict();

const WAIT_KINDS = ["approval", "signal", "timer", "quota", "child"] as const satisfies readonly WaitKind[];

export const waitList = z
  .object({
    kind: z.enum(WAIT_KINDS).optional(),
    limit: z.coerce.number().int().min(1).max(1000).optional(),
  })
  .strict();
