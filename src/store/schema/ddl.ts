/**
 * Each dialect's DDL, rendered from the schema description. A new migration's text is
 * `ddlSince(dialect, version)` (plus whatever it must spell by hand: a dropped index, a function);
 * `schemaDdl` builds the whole current schema at once, which a test compares with what the
 * released migrations build.
 *
 * Hazard: a released migration's text must never change, so nothing already released may be
 * edited in the description (only added, marked `since` a new version): `ddlSince` of a released
 * version must keep rendering what that migration ran.
 */
import type { ColumnSpec, Dialect, IndexSpec, LogicalType, TableSpec } from "./model.js";
import { TABLES } from "./tables.js";

const TYPES: Record<Dialect, Record<LogicalType, string>> = {
  sqlite: { text: "TEXT", int: "INTEGER", bigint: "INTEGER", bool: "INTEGER", bytes: "BLOB" },
  postgres: { text: "TEXT", int: "INTEGER", bigint: "BIGINT", bool: "BOOLEAN", bytes: "BYTEA" },
};

/** The dialect's declared type of a logical type (SQLite's declared type, Postgres's type name). */
export const sqlType = (dialect: Dialect, type: LogicalType): string => TYPES[dialect][type];

/** Whether a table, a column or an index exists in `dialect` (absent `only`: in every dialect). */
const inDialect = (dialect: Dialect, x: { readonly only?: Dialect }): boolean => x.only === undefined || x.only === dialect;

function literal(dialect: Dialect, v: number | boolean): string {
  if (typeof v === "number") return String(v);
  return dialect === "sqlite" ? (v ? "1" : "0") : String(v);
}

function columnDef(dialect: Dialect, t: TableSpec, c: ColumnSpec): string {
  if (t.serial?.column === c.name) {
    return dialect === "sqlite" ? `${c.name} INTEGER PRIMARY KEY${t.serial.autoincrement ? " AUTOINCREMENT" : ""}` : `${c.name} BIGSERIAL PRIMARY KEY`;
  }
  const dflt = c.defaultSql !== undefined ? ` DEFAULT ${c.defaultSql}` : c.default === undefined ? "" : ` DEFAULT ${literal(dialect, c.default)}`;
  return `${c.name} ${sqlType(dialect, c.type)}${c.nullable ? "" : " NOT NULL"}${dflt}`;
}

function storage(dialect: Dialect, table: string, c: ColumnSpec): string[] {
  return dialect === "postgres" && c.uncompressed ? [`ALTER TABLE ${table} ALTER COLUMN ${c.name} SET STORAGE EXTERNAL;`] : [];
}

export function createIndexSql(table: string, i: IndexSpec): string {
  return `CREATE ${i.unique ? "UNIQUE " : ""}INDEX ${i.name} ON ${table} (${i.columns.join(", ")})${i.where === undefined ? "" : ` WHERE ${i.where}`};`;
}

export function createTableSql(dialect: Dialect, name: string, t: TableSpec): string[] {
  const columns = t.columns.filter((c) => inDialect(dialect, c));
  const defs = columns.map((c) => columnDef(dialect, t, c));
  if (!t.serial) defs.push(`PRIMARY KEY (${t.key.join(", ")})`);
  return [
    `CREATE TABLE ${name} (\n  ${defs.join(",\n  ")}\n);`,
    ...columns.flatMap((c) => storage(dialect, name, c)),
    ...(t.indexes ?? []).filter((i) => inDialect(dialect, i)).map((i) => createIndexSql(name, i)),
  ];
}

export function addColumnSql(dialect: Dialect, table: string, t: TableSpec, c: ColumnSpec): string[] {
  return [`ALTER TABLE ${table} ADD COLUMN ${columnDef(dialect, t, c)};`, ...storage(dialect, table, c)];
}

/** What schema version `version` adds to the description's tables, as `dialect`'s statements. */
export function ddlSince(dialect: Dialect, version: number): string {
  const out: string[] = [];
  for (const [name, t] of Object.entries(TABLES) as [string, TableSpec][]) {
    if (!inDialect(dialect, t)) continue;
    if ((t.since ?? 1) === version) {
      out.push(...createTableSql(dialect, name, t));
      continue;
    }
    for (const c of t.columns) if (c.since === version && inDialect(dialect, c)) out.push(...addColumnSql(dialect, name, t, c));
    for (const i of t.indexes ?? []) if (i.since === version && inDialect(dialect, i)) out.push(createIndexSql(name, i));
  }
  return out.join("\n");
}

/** The whole current schema, bookkeeping tables included, as `dialect`'s statements. */
export function schemaDdl(dialect: Dialect): string {
  return (Object.entries(TABLES) as [string, TableSpec][])
    .filter(([, t]) => inDialect(dialect, t))
    .flatMap(([name, t]) => createTableSql(dialect, name, t))
    .join("\n");
}
