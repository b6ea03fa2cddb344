/**
 * The columns every store exports and imports, per table, in canonical order: the order of a row's
 * keys in a dump and in its digest. Both dialects' migrations must define exactly these columns
 * (same names); a migration that adds a column or a table adds it here too.
 *
 * Kinds: `text` (TEXT), `int` (INTEGER / BIGINT: a JS number, refused beyond 2^53), `bool`
 * (SQLite 0/1, Postgres BOOLEAN).
 */
import { SteadError } from "../../errors.js";
import type { RowKey, TransferRow, TransferTable, TransferValue } from "../types.js";

/**
 * The schema version these column lists describe: every dialect's LATEST_VERSION (a test checks).
 * A dump of an older schema is still read; a migration that adds a column must then say here what
 * an older dump's rows hold in it.
 */
export const TRANSFER_SCHEMA_VERSION = 1;

export type ColumnKind = "text" | "int" | "bool";

export interface Column {
  name: string;
  kind: ColumnKind;
  nullable: boolean;
}

export interface TableSchema {
  /** Primary-key columns, in index order: pages are read in this order. */
  key: readonly string[];
  /** The column the store numbers itself (SQLite rowid/AUTOINCREMENT, Postgres BIGSERIAL), if any. */
  serial?: string;
  columns: readonly Column[];
}

const c = (name: string, kind: ColumnKind, nullable = false): Column => ({ name, kind, nullable });

export const TABLE_SCHEMAS = {
  runs: {
    key: ["id"],
    columns: [
      c("id", "text"),
      c("definition", "text"),
      c("module", "text", true),
      c("fingerprint", "text", true),
      c("status", "text"),
      c("input", "text"),
      c("output", "text", true),
      c("error", "text", true),
      c("parent_id", "text", true),
      c("parent_step_id", "text", true),
      c("fence", "int"),
      c("lease_owner", "text", true),
      c("lease_expires_at", "int", true),
      c("owner_host", "text", true),
      c("owner_pid", "int", true),
      c("owner_start", "text", true),
      c("lost_claims", "int"),
      c("pause_requested", "bool"),
      c("created_at", "int"),
      c("updated_at", "int"),
    ],
  },
  steps: {
    key: ["run_id", "seq"],
    columns: [
      c("run_id", "text"),
      c("seq", "int"),
      c("step_id", "text"),
      c("kind", "text"),
      c("status", "text"),
      c("attempt", "int"),
      c("output", "text", true),
      c("error", "text", true),
      c("started_at", "int"),
      c("completed_at", "int", true),
    ],
  },
  waits: {
    key: ["run_id", "name"],
    columns: [
      c("run_id", "text"),
      c("name", "text"),
      c("kind", "text"),
      c("status", "text"),
      c("seq", "int"),
      c("request", "text", true),
      c("wake_at", "int", true),
      c("result", "text", true),
      c("created_at", "int"),
      c("resolved_at", "int", true),
      c("resolved_by", "text", true),
    ],
  },
  holds: {
    key: ["id"],
    serial: "id",
    columns: [
      c("id", "int"),
      c("run_id", "text"),
      c("kind", "text"),
      c("step_id", "text", true),
      c("seq", "int", true),
      c("reason", "text"),
      c("details", "text"),
      c("status", "text"),
      c("choice", "text", true),
      c("created_at", "int"),
      c("released_at", "int", true),
      c("released_by", "text", true),
    ],
  },
  events: {
    key: ["seq"],
    serial: "seq",
    columns: [c("seq", "int"), c("run_id", "text"), c("type", "text"), c("at", "int"), c("data", "text")],
  },
} as const satisfies Record<TransferTable, TableSchema>;

/** The table's schema; anything but a {@link TransferTable} is refused (names reach SQL text). */
export function tableSchema(table: TransferTable): TableSchema {
  if (!Object.hasOwn(TABLE_SCHEMAS, table)) {
    throw new SteadError("STEAD_BAD_INPUT", `${JSON.stringify(table)} is not a table Stead exports`, { fix: `use one of ${Object.keys(TABLE_SCHEMAS).join(", ")}` });
  }
  return TABLE_SCHEMAS[table];
}

/** A column name quoted for SQL (both dialects): names here are fixed, but some are keywords. */
export const quoteColumn = (name: string): string => `"${name}"`;

export function keyColumns(table: TransferTable): readonly Column[] {
  const s = tableSchema(table);
  return s.key.map((k) => s.columns.find((col) => col.name === k) as Column);
}

export function columnNames(table: TransferTable): string[] {
  return tableSchema(table).columns.map((col) => col.name);
}

/** The primary key of `row` (a row of `table`), to continue a page after it. */
export function rowKey(table: TransferTable, row: TransferRow): RowKey {
  return tableSchema(table).key.map((k) => {
    const v = row[k];
    if (typeof v !== "string" && typeof v !== "number") throw new Error(`${table} row has no key column ${k}`);
    return v;
  });
}

/**
 * A driver's row as a {@link TransferRow}: columns in canonical order, integers as numbers
 * (Postgres hands BIGINT back as text), flags as booleans (SQLite stores 0/1).
 */
export function normaliseRow(table: TransferTable, raw: Record<string, unknown>): TransferRow {
  const row: TransferRow = {};
  for (const col of tableSchema(table).columns) row[col.name] = normaliseValue(table, col, raw[col.name]);
  return row;
}

const asText = (v: unknown): string =>
  typeof v === "string" ? v : typeof v === "number" || typeof v === "bigint" || typeof v === "boolean" ? v.toString() : JSON.stringify(v);

function normaliseValue(table: TransferTable, col: Column, v: unknown): TransferValue {
  if (v === null || v === undefined) return null;
  switch (col.kind) {
    case "text":
      return asText(v);
    case "int": {
      const n = typeof v === "number" ? v : Number(v);
      // A value past 2^53 would come back as a different number: refuse rather than export it changed.
      if (!Number.isSafeInteger(n)) {
        throw new SteadError("STEAD_INVALID_STATE", `${table}.${col.name} holds ${asText(v)}, not an integer a JavaScript number represents exactly`, {
          fix: "correct that row in the store by hand, then export again",
        });
      }
      return n;
    }
    case "bool":
      return typeof v === "boolean" ? v : Number(v) !== 0;
  }
}

/**
 * The values of `row` in column order, after checking it has exactly the table's columns with
 * values of their kinds. `where` names the row in the error (a dump line, a caller).
 */
export function rowValues(table: TransferTable, row: TransferRow, where: string): TransferValue[] {
  const schema = tableSchema(table);
  const bad = (problem: string) =>
    new SteadError("STEAD_BAD_INPUT", `${where}: ${table} row ${problem}`, {
      fix: "import only dumps written by `stead export`, unedited",
    });
  if (typeof row !== "object" || row === null || Array.isArray(row)) throw bad("is not an object");
  const known = new Set(schema.columns.map((col) => col.name));
  for (const k of Object.keys(row)) if (!known.has(k)) throw bad(`has a column this schema does not know: ${k}`);
  return schema.columns.map((col) => {
    if (!(col.name in row)) throw bad(`lacks column ${col.name}`);
    const v = row[col.name];
    if (v === null) {
      if (!col.nullable) throw bad(`has null in ${col.name}, which may not be null`);
      return null;
    }
    const ok = col.kind === "text" ? typeof v === "string" : col.kind === "int" ? Number.isSafeInteger(v) : typeof v === "boolean";
    if (!ok) throw bad(`has ${JSON.stringify(v)} in ${col.name}, which holds ${col.kind === "int" ? "integers" : col.kind === "bool" ? "true/false" : "text"}`);
    return v as TransferValue;
  });
}

/** `row` with its columns in canonical order (validated like {@link rowValues}). */
export function canonicalRow(table: TransferTable, row: TransferRow, where: string): TransferRow {
  const values = rowValues(table, row, where);
  const out: TransferRow = {};
  tableSchema(table).columns.forEach((col, i) => (out[col.name] = values[i] ?? null));
  return out;
}
