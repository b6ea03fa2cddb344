/**
 * A journal row's write, defined once for every path that writes one (a mutation's steps and a
 * new run's journal, in SQLite's applyMutation and in Postgres's step fast path): each column of
 * `steps` takes the StepWrite field of its name (`step_id` ← `stepId`), null when absent; a
 * rewrite of the same (run_id, seq) replaces every column but `started_at`, which keeps the first
 * write's. The columns come from the schema description, so a step column added there is written
 * by both.
 *
 * Hazard: Postgres's stead_apply_mutation (migrations 4 and 5) spells this write in its own frozen
 * text; a new step column needs a migration that replaces that function too (its step inserts can
 * be `stepsFromJson`).
 */
import type { StepWrite } from "../types.js";
import { sqlType } from "../schema/ddl.js";
import { TABLES } from "../schema/tables.js";

const KEPT_ON_REWRITE = new Set(["started_at"]);

const camel = (s: string): string => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

const COLUMNS = TABLES.steps.columns.map((c) => ({ name: c.name, field: camel(c.name), type: c.type }));
const WRITTEN = COLUMNS.filter((c) => c.name !== "run_id");
const NAMES = COLUMNS.map((c) => c.name).join(", ");

const ON_CONFLICT = `ON CONFLICT (${TABLES.steps.key.join(", ")}) DO UPDATE SET ${COLUMNS.filter((c) => !TABLES.steps.key.includes(c.name as never) && !KEPT_ON_REWRITE.has(c.name))
  .map((c) => `${c.name} = excluded.${c.name}`)
  .join(", ")}`;

/** One row, `?` placeholders in the order of {@link stepParams}. */
export const STEP_UPSERT_SQL = `INSERT INTO steps (${NAMES}) VALUES (${COLUMNS.map(() => "?").join(", ")}) ${ON_CONFLICT}`;

export function stepParams(runId: string, st: StepWrite): unknown[] {
  const w = st as unknown as Record<string, unknown>;
  return [runId, ...WRITTEN.map((c) => w[c.field] ?? null)];
}

/**
 * Postgres: the rows of a JSON array of StepWrites (`json`, a jsonb expression) for run `runId`
 * (an SQL expression), in one INSERT; `from` joins more relations first (a CTE the write depends on).
 */
export function stepsFromJson(runId: string, json: string, from = ""): string {
  const fields = WRITTEN.map((c) => `x."${c.field}"`).join(", ");
  const record = WRITTEN.map((c) => `"${c.field}" ${sqlType("postgres", c.type).toLowerCase()}`).join(", ");
  return `INSERT INTO steps (${NAMES})
  SELECT ${runId}, ${fields}
  FROM ${from ? `${from}, ` : ""}jsonb_to_recordset(${json}) AS x(${record})
  ${ON_CONFLICT}`;
}
