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
  /** Schema version that added the column to an existing table (absent: the table's own). Such a column must be nullable. */
  readonly since?: number;
  /** Postgres keeps it out of line and uncompressed (data compressed already: TOAST must not try again). */
  readonly uncompressed?: boolean;
}

export interface IndexSpec {
  readonly name: string;
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
