/**
 * The shape of a schema description (see `tables.ts` for the description itself): tables,
 * columns with logical types, nullability, defaults, keys and indexes, each marked with the schema
 * version that added it. Dialects render it (`ddl.ts`); nothing here names a dialect's type.
 */

/**
 * `int`: SQLite INTEGER, Postgres INTEGER (32-bit). `bigint`: SQLite INTEGER, Postgres BIGINT.
 * `bool`: SQLite INTEGER 0/1, Postgres BOOLEAN. `bytes`: SQLite BLOB, Postgres BYTEA.
 */
export type LogicalType = "text" | "int" | "bigint" | "bool" | "bytes";

export interface ColumnSpec<N extends string = string, T extends LogicalType = LogicalType, Nullable extends boolean = boolean> {
  readonly name: N;
  readonly type: T;
  readonly nullable: Nullable;
  readonly default?: number | boolean;
  /** Schema version that added the column to an existing table (absent: the table's own). Such a column must be nullable, unless it is a dialect's bookkeeping (no dump carries it). */
  readonly since?: number;
  /** Postgres keeps it out of line and uncompressed (data compressed already: TOAST must not try again). */
  readonly uncompressed?: boolean;
  /**
   * The column exists in this dialect only, as the store's own bookkeeping (see {@link bookkeeping}):
   * no row type has a field for it and no dump carries it.
   */
  readonly only?: Dialect;
  /** A default given as an SQL expression of the column's one dialect (a column with `only`). */
  readonly defaultSql?: string;
}

export interface IndexSpec {
  readonly name: string;
  /** The index exists in this dialect only (an index of a bookkeeping column; its columns may then be spelled in that dialect, e.g. with an operator class). */
  readonly only?: Dialect;
  readonly columns: readonly string[];
  readonly unique?: boolean;
  /**
   * A partial index's predicate, spelled so both dialects accept it. A query meant to use the index
   * repeats this text exactly (import it): a planner proves an index applies only from the same words.
   */
  readonly where?: string;
  /** Schema version that added the index (absent: the table's own). */
  readonly since?: number;
}

export interface TableSpec<C extends readonly ColumnSpec[] = readonly ColumnSpec[]> {
  /** Primary-key columns, in index order. */
  readonly key: readonly string[];
  /**
   * The key column the store numbers itself (SQLite INTEGER PRIMARY KEY, Postgres BIGSERIAL).
   * `autoincrement`: a deleted row's number is never handed out again (SQLite AUTOINCREMENT; a
   * Postgres sequence always behaves so). Without it SQLite hands out max + 1.
   */
  readonly serial?: { readonly column: string; readonly autoincrement?: boolean };
  readonly columns: C;
  readonly indexes?: readonly IndexSpec[];
  /** Schema version that added the table (absent: 1; 0: the bookkeeping every store creates before migration 1). */
  readonly since?: number;
  /** The table exists in this dialect only. */
  readonly only?: "sqlite" | "postgres";
}

export type Dialect = "sqlite" | "postgres";

export const col = <N extends string, T extends LogicalType, Nullable extends boolean = false>(
  name: N,
  type: T,
  nullable?: Nullable,
  extra: Omit<ColumnSpec, "name" | "type" | "nullable"> = {},
): ColumnSpec<N, T, Nullable> => ({ name, type, nullable: (nullable ?? false) as Nullable, ...extra });

/** A nullable column a later migration added to an existing table. */
export const added = <N extends string, T extends LogicalType>(since: number, name: N, type: T): ColumnSpec<N, T, true> => ({ name, type, nullable: true, since });

/**
 * A column one dialect keeps for its own use, filled by its `defaultSql` on every insert: no row
 * type has a field for it and no dump carries it (its values mean something in this database only,
 * so an import writes fresh ones). Not null: the default fills the rows already there when a
 * migration adds it (a non-volatile default is evaluated once, for all of them, without a rewrite).
 */
export const bookkeeping = <N extends string, T extends LogicalType, D extends Dialect>(
  since: number,
  only: D,
  name: N,
  type: T,
  defaultSql: string,
): ColumnSpec<N, T, false> & { readonly only: D } => ({ name, type, nullable: false, since, only, defaultSql });

/** The table's columns as they were at schema `version`: those added later are left out. */
export const columnsAt = <C extends ColumnSpec>(t: TableSpec<readonly C[]>, version: number): C[] => t.columns.filter((c) => (c.since ?? t.since ?? 1) <= version);
