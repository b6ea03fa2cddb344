/**
 * The narrow driver every SQL store offers its shared code (kysely's shape, kept to what Stead
 * needs): the dialect (how a shared statement is spelled, and what the database can do, as
 * flags), reads (one statement's rows, outside any write) and a write transaction of a batch of
 * statements. A port whose statements are all shared is written once on it (sql/*-port.ts); each
 * dialect hands its own connection in.
 *
 * Hazard: a transaction is a batch, never a callback that awaits. SQLite's (better-sqlite3) runs
 * synchronously inside one IMMEDIATE transaction, with no turn of the event loop between BEGIN and
 * COMMIT: the file's write lock stays short and nothing else in the process can slip into the
 * transaction. Postgres's runs the batch on one pooled connection. So what a write decides between
 * statements is said as `check`, which sees every result before COMMIT and refuses by throwing;
 * the commit path (the mutation plan, group commit) is each dialect's own for the same reason.
 */
import type { SqlDialect } from "./dialect.js";

type Raw = Record<string, unknown>;

/** One statement, `?` placeholders. */
export interface Statement {
  sql: string;
  params: unknown[];
}

/** What a statement of a batch did: its rows (a SELECT, or RETURNING), and the rows it changed. */
export interface StatementResult {
  rows: Raw[];
  changes: number;
}

export interface SqlDriver {
  /** How a shared statement is spelled here, and what the database can do (its capabilities). */
  readonly dialect: SqlDialect;
  /** The rows of one statement written with `?` placeholders, read outside any write. */
  all(sql: string, params?: readonly unknown[]): Promise<Raw[]>;
  /**
   * One write statement on its own (autocommit: one round trip on Postgres), and the rows it
   * returns (say RETURNING to learn what it changed). Hazard: it may be retried through a
   * connection fault, so it must be idempotent; anything else goes in `transact`.
   */
  run(statement: Statement): Promise<Raw[]>;
  /** `statements` in one write transaction, in order; `check` sees the results before COMMIT and refuses by throwing (nothing written). */
  transact(statements: readonly Statement[], check?: (results: readonly StatementResult[]) => void): Promise<StatementResult[]>;
}
