/**
 * The narrow driver every SQL store offers its shared code (kysely's shape, kept to what Stead
 * needs): the dialect (how a shared statement is spelled, and what the database can do, as
 * flags), and reads — one statement's rows, outside any write. A port whose statements are all shared reads
 * is written once against it (sql/*-reads.ts); each dialect hands its own connection in.
 *
 * Writes stay with each dialect's connection, on purpose: SQLite's (better-sqlite3) run
 * synchronously inside one IMMEDIATE transaction, with no turn of the event loop between BEGIN and
 * COMMIT — that keeps the file's write lock short and lets nothing else in the process slip into
 * the transaction; Postgres's are async on a pooled connection. One `transaction(fn)` for both
 * would put an await between SQLite's statements and open that window.
 */
import type { SqlDialect } from "./dialect.js";

type Raw = Record<string, unknown>;

export interface SqlDriver {
  /** How a shared statement is spelled here, and what the database can do (its capabilities). */
  readonly dialect: SqlDialect;
  /** The rows of one statement written with `?` placeholders, read outside any write. */
  all(sql: string, params?: readonly unknown[]): Promise<Raw[]>;
}
