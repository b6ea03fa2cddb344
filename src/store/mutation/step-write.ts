/**
 * A journal row's write, defined once for every path that writes one (a mutation's steps and a
 * new run's journal, in SQLite's applyMutation, in Postgres's stead_apply_mutation from migration 6
 * and in its step fast path): each column of `steps` takes the StepWrite field of its name
 * (`step_id` ← `stepId`), null when absent; a rewrite of the same (run_id, seq) replaces every
 * column but `started_at`, which keeps the first write's. The columns come from the schema
 * description, so a step column added there is written by all of them (Postgres's installed
 * function once a migration renders it again).
 */
import type { StepWrite } from "../types.js";
import { columnsAt } from "../schema/model.js";
import { fieldOf, recordset } from "../schema/json-record.js";
import { sqlType } from "../schema/ddl.js";
import { SCHEMA_VERSION, TABLES } from "../schema/tables.js";

const KEPT_ON_REWRITE = new Set(["started_at"]);
const KEY: readonly string[] = TABLES.steps.key;

function columns(version: number) {
  const all = columnsAt(TABLES.steps, version).map((c) => ({ name: c.name, field: fieldOf(c.name), type: c.type }));
  const names = all.map((c) => c.name).join(", ");
  const onConflict = `ON CONFLICT (${KEY.join(", ")}) DO UPDATE SET ${all
    .filter((c) => !KEY.includes(c.name) && !KEPT_ON_REWRITE.has(c.name))
    .map((c) => `${c.name} = excluded.${c.name}`)
    .join(", ")}`;
  return { all, written: all.filter((c) => c.name !== "run_id"), names, onConflict };
}

const CURRENT = columns(SCHEMA_VERSION);

/** One row, `?` placeholders in the order of {@link stepParams}. */
export const STEP_UPSERT_SQL = `INSERT INTO steps (${CURRENT.names}) VALUES (${CURRENT.all.map(() => "?").join(", ")}) ${CURRENT.onConflict}`;

/** The journal's payloads (sealed when the store is encrypted): their places in {@link stepParams}. */
export const STEP_PAYLOAD_PARAMS: readonly number[] = ["output", "error", "checkpoint"].map((f) => {
  const at = CURRENT.written.findIndex((c) => c.field === f);
  if (at < 0) throw new Error(`steps has no ${f} column`);
  return at + 1;
});

export function stepParams(runId: string, st: StepWrite): unknown[] {
  const w = st as unknown as Record<string, unknown>;
  return [runId, ...CURRENT.written.map((c) => w[c.field] ?? null)];
}

/**
 * Postgres: the rows of a JSON array of StepWrites (`json`, a jsonb expression) for run `runId`
 * (an SQL expression), in one INSERT; `from` joins more relations first (a CTE the write depends
 * on). `version`: the schema whose columns it writes (a migration renders its own version's, so
 * its text never changes when a column is added later).
 */
export function stepsFromJson(runId: string, json: string, from = "", version = SCHEMA_VERSION): string {
  const c = columns(version);
  const fields = c.written.map((w) => `x."${w.field}"`).join(", ");
  return `INSERT INTO steps (${c.names})
  SELECT ${runId}, ${fields}
  FROM ${from ? `${from}, ` : ""}${recordset(json, c.written)}
  ${c.onConflict}`;
}

/**
 * Postgres: one StepWrite as parameters `$first`… (values from {@link stepParams}, run id left
 * out) for run `runId`, joining `from` as {@link stepsFromJson} does. The same row as one element
 * of `stepsFromJson`'s array, without JSON to build on one side and take apart on the other.
 */
export function stepFromParams(runId: string, first: number, from: string): string {
  const values = CURRENT.written.map((c, i) => `$${first + i}::${sqlType("postgres", c.type).toLowerCase()}`).join(", ");
  return `INSERT INTO steps (${CURRENT.names})
  SELECT ${runId}, ${values}
  FROM ${from}
  ${CURRENT.onConflict}`;
}
