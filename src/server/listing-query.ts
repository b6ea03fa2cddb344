/**
 * A run listing's query string (GET /runs): every filter, sort and page field of the control
 * API's listing (stead.runs.list), under the same names. Query values are text: times are whole
 * milliseconds, statuses a comma-separated list. What zod cannot judge (a cursor's position,
 * sort and filters) the store judges, and a refusal there is given the field's query name too.
 */
import { z } from "zod";
import { SteadError } from "../errors.js";
import { MAX_PAGE_SIZE } from "../engine/runs/listing.js";
import { RUN_STATUSES } from "../store/types.js";

const ms = z
  .string()
  .regex(/^\d{1,15}$/, "a time in whole milliseconds since the epoch")
  .transform(Number);

const statuses = z
  .string()
  .transform((s) => s.split(","))
  .pipe(z.array(z.enum(RUN_STATUSES)).min(1));

const text = z.string().min(1).max(200);

export const runListing = z
  .object({
    status: statuses.optional().describe(`runs with any of these statuses, comma-separated: ${RUN_STATUSES.join(", ")}`),
    definition: text.optional().describe("runs of this definition"),
    sessionId: text.optional().describe("the turns of this session"),
    parentId: text.optional().describe("the children of this run"),
    createdSince: ms.optional().describe("created at or after this time (ms)"),
    createdBefore: ms.optional().describe("created before this time (ms)"),
    updatedSince: ms.optional().describe("changed at or after this time (ms)"),
    updatedBefore: ms.optional().describe("changed before this time (ms)"),
    idPrefix: text.optional().describe("ids starting with this text, taken literally"),
    sort: z.enum(["createdAt", "updatedAt"]).optional().describe("the order's key (default createdAt); id breaks ties"),
    order: z.enum(["asc", "desc"]).optional().describe("default desc, newest first"),
    limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional().describe(`runs per page (default 100, at most ${MAX_PAGE_SIZE})`),
    cursor: z
      .string()
      .min(1)
      .max(2048)
      .regex(/^[A-Za-z0-9_-]+$/, "a cursor is the nextCursor of the page before, unchanged")
      .optional()
      .describe("the nextCursor of the page before, with the same filters, sort and order"),
  })
  .strict();

export type RunListingQuery = z.output<typeof runListing>;

const QUERY_FIELDS: ReadonlySet<string> = new Set(Object.keys(runListing.shape));

/** A listing's refusal by the store (its `field` a listing field) as the query field the request named. */
export function asQueryRefusal(e: unknown): unknown {
  if (!(e instanceof SteadError) || e.code !== "STEAD_BAD_OPTION") return e;
  const field = e.details.field;
  if (typeof field !== "string" || !QUERY_FIELDS.has(field)) return e;
  return new SteadError(e.code, e.message, { ...e.details, field: `query.${field}` });
}
