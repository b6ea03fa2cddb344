/**
 * Postgres: a JSON object's fields as typed columns (the column definition list of
 * `jsonb_to_record` / `jsonb_to_recordset`), each field named as the write protocol spells it
 * (`stepId`) and typed as the schema's column it fills (`step_id`). A field absent from an object
 * reads as null; a present one of the wrong JSON type fails the statement.
 */
import { sqlType } from "./ddl.js";
import type { LogicalType } from "./model.js";
import { tableSpec } from "./tables.js";

/** The write protocol's name of a column: `files_changed` ← `filesChanged`. */
export const fieldOf = (column: string): string => column.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

export interface RecordField {
  readonly field: string;
  readonly type: LogicalType | "jsonb";
}

/** The field that fills `table.column`, typed as that column; named `field` when the protocol names it otherwise. */
export function columnField(table: string, column: string, field = fieldOf(column)): RecordField {
  const c = tableSpec(table).columns.find((x) => x.name === column);
  if (!c) throw new Error(`${table} has no column ${column}`);
  return { field, type: c.type };
}

/** `"stepId" text, "seq" integer, …`: fields are quoted, since the protocol's are camelCase. */
export const recordDef = (fields: readonly RecordField[]): string =>
  fields.map((f) => `"${f.field}" ${f.type === "jsonb" ? "jsonb" : sqlType("postgres", f.type).toLowerCase()}`).join(", ");

/**
 * A FROM item of the rows of `json` (a jsonb array expression) as relation `alias`, one column per
 * field. `ordinal`: also a column `i`, each element's position from 1, for a write whose order
 * shows (serial numbers) or where the first of two entries wins.
 */
export function recordset(json: string, fields: readonly RecordField[], alias = "x", ordinal = false): string {
  if (!ordinal) return `jsonb_to_recordset(${json}) AS ${alias}(${recordDef(fields)})`;
  return `ROWS FROM (jsonb_to_recordset(${json}) AS (${recordDef(fields)})) WITH ORDINALITY AS ${alias}(${fields.map((f) => `"${f.field}"`).join(", ")}, i)`;
}
