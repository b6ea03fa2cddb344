/**
 * The columns every store exports and imports, per table, in canonical order: the order of a row's
 * keys in a dump and in its digest. They are the schema description's (`schema/tables.ts`), which
 * both dialects' migrations must build exactly (a test checks): a column or a table a migration
 * adds is added there, and appears here.
 *
 * Kinds: `text` (TEXT), `int` (INTEGER / BIGINT: a JS number, refused beyond 2^53), `bool`
 * (SQLite 0/1, Postgres BOOLEAN).
 */
import { SteadError } from "../../errors.js";
import { TRANSFER_TABLES, type RowKey, type TransferRow, type TransferTable, type TransferValue } from "../types.js";
import type { LogicalType } from "../schema/model.js";
import { sealedTextOfBytes } from "../encryption/cipher.js";
import { SCHEMA_VERSION, tableSpec, type TableName } from "../schema/tables.js";

/**
 * The schema version these column lists describe: every dialect's LATEST_VERSION (a test checks).
 * A dump of an older schema is still read: a column a later migration added says so (`since`),
 * and an older dump's rows, which lack it, hold null in it.
 */
export const TRANSFER_SCHEMA_VERSION = SCHEMA_VERSION;

/**
 * The schema's tables a dump leaves out, each with why: they hold no user data. Every table of
 * `schema/tables.ts` is in TRANSFER_TABLES or here (a test checks), so a new table is a decision.
 */
export const NOT_TRANSFERRED: Readonly<Record<Exclude<TableName, TransferTable>, string>> = {
  stead_meta: "bookkeeping: every store writes its own",
  stead_migrations: "bookkeeping: every store records its own migrations",
  stead_commits: "Postgres's log of group commits whose reply may be lost: about this database's transactions only",
  definitions: "derived from code, not user data: workers announce it again when they start on the target store (until one has, a start by name of it is refused there)",
  data_keys: "an encrypted store's keys go in the dump's header instead, wrapped as kept; the target takes them (re-wrapped by its own key) before any row is written",
  announcements: "live state of the source's workers (alive until a refresh bound): meaningless in another store",
};

/** `bytes`: SQLite BLOB, Postgres BYTEA; a transfer row carries it as base64 text. */
export type ColumnKind = "text" | "int" | "bool" | "bytes";

export interface Column {
  name: string;
  kind: ColumnKind;
  nullable: boolean;
  /** Schema version that added the column (absent: version 1). Such a column must be nullable. */
  since?: number;
}

export interface TableSchema {
  /** Primary-key columns, in index order: pages are read in this order. */
  key: readonly string[];
  /** The column the store numbers itself (SQLite rowid/AUTOINCREMENT, Postgres BIGSERIAL), if any. */
  serial?: string;
  /** At most this many rows per `readRows` page (large rows). */
  pageRows?: number;
  columns: readonly Column[];
}

const KIND: Record<LogicalType, ColumnKind> = { text: "text", int: "int", bigint: "int", bool: "bool", bytes: "bytes" };

/** A blob may be megabytes: its pages stay small. */
const PAGE_ROWS: Partial<Record<TransferTable, number>> = { blobs: 16 };

function transferSchema(table: TransferTable): TableSchema {
  const t = tableSpec(table);
  const pageRows = PAGE_ROWS[table];
  return {
    key: t.key,
    ...(t.serial ? { serial: t.serial.column } : {}),
    ...(pageRows === undefined ? {} : { pageRows }),
    // A dialect's bookkeeping (a transaction id) means nothing in another database: the target writes its own.
    columns: t.columns.filter((c) => c.only === undefined).map((c) => ({ name: c.name, kind: KIND[c.type], nullable: c.nullable, ...(c.since === undefined ? {} : { since: c.since }) })),
  };
}

export const TABLE_SCHEMAS: Readonly<Record<TransferTable, TableSchema>> = Object.fromEntries(TRANSFER_TABLES.map((t) => [t, transferSchema(t)])) as Record<TransferTable, TableSchema>;

/** The table's schema; anything but a {@link TransferTable} is refused (names reach SQL text). */
export function tableSchema(table: TransferTable): TableSchema {
  if (!Object.hasOwn(TABLE_SCHEMAS, table)) {
    throw new SteadError("STEAD_BAD_OPTION", `${JSON.stringify(table)} is not a table Stead exports`, { fix: `use one of ${Object.keys(TABLE_SCHEMAS).join(", ")}` });
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

/** A text column's value; a sealed text kept as its bytes (SQLite) is exported as the text it spells. */
const asText = (v: unknown): string =>
  typeof v === "string"
    ? v
    : typeof v === "number" || typeof v === "bigint" || typeof v === "boolean"
      ? v.toString()
      : ((v instanceof Uint8Array ? sealedTextOfBytes(v) : null) ?? JSON.stringify(v));

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
    case "bytes":
      return Buffer.isBuffer(v) ? v.toString("base64") : v instanceof Uint8Array ? Buffer.from(v).toString("base64") : asText(v);
  }
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The table's columns as a store of schema version `schema` has them. */
export function columnsAt(table: TransferTable, schema: number): readonly Column[] {
  return tableSchema(table).columns.filter((col) => (col.since ?? 1) <= schema);
}

/**
 * The values of `row` in column order, after checking it has exactly the table's columns with
 * values of their kinds. `where` names the row in the error (a dump line, a caller).
 */
export function rowValues(table: TransferTable, row: TransferRow, where: string): TransferValue[] {
  return valuesAt(table, tableSchema(table).columns, row, where);
}

function valuesAt(table: TransferTable, columns: readonly Column[], row: TransferRow, where: string): TransferValue[] {
  const bad = (problem: string) =>
    new SteadError("STEAD_BAD_DUMP", `${where}: ${table} row ${problem}`, {
      fix: "import only dumps written by `stead export`, unedited",
    });
  if (typeof row !== "object" || row === null || Array.isArray(row)) throw bad("is not an object");
  const known = new Set(columns.map((col) => col.name));
  for (const k of Object.keys(row)) if (!known.has(k)) throw bad(`has a column this schema does not know: ${k}`);
  return columns.map((col) => {
    if (!(col.name in row)) throw bad(`lacks column ${col.name}`);
    const v = row[col.name];
    if (v === null) {
      if (!col.nullable) throw bad(`has null in ${col.name}, which may not be null`);
      return null;
    }
    const ok =
      col.kind === "text" ? typeof v === "string" : col.kind === "int" ? Number.isSafeInteger(v) : col.kind === "bytes" ? typeof v === "string" && BASE64.test(v) : typeof v === "boolean";
    if (!ok) {
      const holds = col.kind === "int" ? "integers" : col.kind === "bool" ? "true/false" : col.kind === "bytes" ? "base64 text" : "text";
      throw bad(`has ${JSON.stringify(v).slice(0, 80)} in ${col.name}, which holds ${holds}`);
    }
    return v as TransferValue;
  });
}

/**
 * `row`, a row of a store of schema version `schema`, validated like {@link rowValues} against that
 * version's columns. `asDumped`: its columns in canonical order (what that version's digests are
 * taken over); `row`: the same with the columns added since, as null.
 */
export function canonicalRow(table: TransferTable, row: TransferRow, where: string, schema = TRANSFER_SCHEMA_VERSION): { row: TransferRow; asDumped: TransferRow } {
  const columns = columnsAt(table, schema);
  const values = valuesAt(table, columns, row, where);
  const asDumped: TransferRow = {};
  columns.forEach((col, i) => (asDumped[col.name] = values[i] ?? null));
  if (columns.length === tableSchema(table).columns.length) return { row: asDumped, asDumped };
  const upgraded: TransferRow = {};
  for (const col of tableSchema(table).columns) upgraded[col.name] = asDumped[col.name] ?? null;
  return { row: upgraded, asDumped };
}
