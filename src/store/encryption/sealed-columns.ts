/**
 * Every column an encrypted store seals, by table: the list the "in the clear" list of
 * docs/guides/operations.md is checked against (test/hostile/clear-columns.test.ts: a column of
 * the schema is sealed here or named there, with why). The types below hold it to the columns `at` (sealed-values.ts) binds a
 * sealed value to, so a column sealed there and missing here fails the typecheck.
 *
 * Two are sealed in part: `events.data` keeps an event's `step` and `attempt` beside the sealed
 * rest, and a step's completion event and the store's own lease events whole (no payload is in
 * them); `blobs.hash` is not the content's hash but a keyed address (keyring.ts).
 */
import type { TableName } from "../schema/tables.js";
import type { at } from "./sealed-values.js";

export const SEALED_COLUMNS = {
  runs: ["input", "output", "error"],
  steps: ["output", "error", "checkpoint"],
  // A wait's result is sealed as its journal step's output (resolving a wait copies it there).
  waits: ["request", "result"],
  holds: ["reason", "details"],
  events: ["data"],
  idempotency_keys: ["summary", "result"],
  snapshots: ["notes", "checkpoint"],
  blobs: ["data"],
} as const satisfies Partial<Record<TableName, readonly string[]>>;

type Listed<T extends keyof typeof SEALED_COLUMNS> = (typeof SEALED_COLUMNS)[T][number];
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Each of `at`'s column arguments is exactly that table's list. */
export const SEALED_COLUMNS_MATCH_AT: [
  Same<Parameters<typeof at.run>[1], Listed<"runs">>,
  Same<Parameters<typeof at.step>[2], Listed<"steps">>,
  Same<Parameters<typeof at.hold>[3], Listed<"holds">>,
  Same<Parameters<typeof at.idempotency>[3], Listed<"idempotency_keys">>,
  Same<Parameters<typeof at.snapshot>[3], Listed<"snapshots">>,
] = [true, true, true, true, true];
