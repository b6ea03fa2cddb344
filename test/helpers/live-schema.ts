/**
 * A database's live schema read from its catalog (SQLite: sqlite_master and PRAGMAs; Postgres:
 * information_schema and pg_catalog), in one plain shape so two databases of a dialect compare
 * with toEqual: tables, columns (declared type, nullability, default, storage), primary key,
 * the numbering column, and indexes (columns, uniqueness, predicate as the database spells it).
 */
import type Database from "better-sqlite3";
import type pg from "pg";

export interface LiveColumn {
  name: string;
  type: string;
  notNull: boolean;
  default: string | null;
  /** Postgres attstorage ('x' extended, 'e' external, 'p' plain, 'm' main); null in SQLite. */
  storage: string | null;
}

export interface LiveIndex {
  name: string;
  columns: string[];
  unique: boolean;
  where: string | null;
}

export interface LiveTable {
  columns: LiveColumn[];
  key: string[];
  /** SQLite only: whether the table numbers its rows with AUTOINCREMENT. */
  autoincrement: boolean;
  indexes: LiveIndex[];
}

export type LiveSchema = Record<string, LiveTable>;

const squeeze = (s: string): string => s.replace(/\s+/g, " ").trim();

export function sqliteSchema(db: Database.Database): LiveSchema {
  const tables = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string; sql: string }[];
  const out: LiveSchema = {};
  for (const t of tables) {
    const info = db.prepare(`SELECT name, type, "notnull" AS nn, dflt_value AS d, pk FROM pragma_table_info(?) ORDER BY cid`).all(t.name) as { name: string; type: string; nn: number; d: string | null; pk: number }[];
    const key = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name);
    const list = db.prepare("SELECT name, \"unique\" AS u, origin FROM pragma_index_list(?) WHERE origin = 'c' ORDER BY name").all(t.name) as { name: string; u: number }[];
    out[t.name] = {
      // A single-column primary key that is not INTEGER may hold NULL in SQLite unless declared NOT
      // NULL, and the released migrations did not declare it (Stead never writes NULL there): such
      // a key column counts as NOT NULL, as it is in Postgres.
      columns: info.map((c) => ({ name: c.name, type: c.type, notNull: c.nn === 1 || (c.pk > 0 && key.length === 1), default: c.d, storage: null })),
      key,
      autoincrement: /\bAUTOINCREMENT\b/i.test(t.sql),
      indexes: list.map((i) => {
        const sql = (db.prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?").get(i.name) as { sql: string }).sql;
        const where = /\bWHERE\b([\s\S]*)$/i.exec(sql)?.[1];
        const columns = (db.prepare("SELECT name FROM pragma_index_info(?) ORDER BY seqno").all(i.name) as { name: string }[]).map((c) => c.name);
        return { name: i.name, columns, unique: i.u === 1, where: where === undefined ? null : squeeze(where) };
      }),
    };
  }
  return out;
}

export async function postgresSchema(c: pg.Client): Promise<LiveSchema> {
  const tables = (await c.query<{ t: string }>("SELECT table_name AS t FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1")).rows.map((r) => r.t);
  const out: LiveSchema = {};
  for (const t of tables) {
    const columns = (
      await c.query<{ name: string; type: string; nullable: string; d: string | null; storage: string }>(
        `SELECT c.column_name AS name, c.data_type AS type, c.is_nullable AS nullable, c.column_default AS d, a.attstorage AS storage
         FROM information_schema.columns c
         JOIN pg_attribute a ON a.attrelid = (quote_ident(c.table_name))::regclass AND a.attname = c.column_name
         WHERE c.table_schema = current_schema() AND c.table_name = $1 ORDER BY c.ordinal_position`,
        [t],
      )
    ).rows;
    const key = (
      await c.query<{ name: string }>(
        `SELECT a.attname AS name FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
         WHERE i.indrelid = (quote_ident($1))::regclass AND i.indisprimary ORDER BY array_position(i.indkey::int2[], a.attnum)`,
        [t],
      )
    ).rows.map((r) => r.name);
    const indexes = (
      await c.query<{ name: string; unique: boolean; where: string | null; columns: string[] }>(
        `SELECT x.relname AS name, i.indisunique AS unique, pg_get_expr(i.indpred, i.indrelid) AS where,
                array(SELECT pg_get_indexdef(i.indexrelid, k, true) FROM generate_series(1, i.indnatts) AS k ORDER BY k) AS columns
         FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid
         WHERE i.indrelid = (quote_ident($1))::regclass AND NOT i.indisprimary ORDER BY x.relname`,
        [t],
      )
    ).rows;
    out[t] = {
      columns: columns.map((col) => ({ name: col.name, type: col.type, notNull: col.nullable === "NO", default: col.d, storage: col.storage })),
      key,
      autoincrement: false,
      indexes: indexes.map((i) => ({ name: i.name, columns: i.columns, unique: i.unique, where: i.where })),
    };
  }
  return out;
}
