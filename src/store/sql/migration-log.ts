/**
 * The migration log (`stead_migrations`) and the store marker, read and written the same way by
 * both SQL stores, with `?` placeholders (see dialect.ts). The DDL that creates them is each
 * dialect's (their column types differ) and is frozen with migration 1.
 */
/** One numbered migration: the statements it runs, in one transaction with its log row. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const STORE_MARKER = "SELECT value FROM stead_meta WHERE key = 'marker'";
export const LATEST_MIGRATION = "SELECT MAX(version) AS v FROM stead_migrations";
/** Parameter: version. */
export const MIGRATION_APPLIED = "SELECT 1 FROM stead_migrations WHERE version = ?";
/** Parameters: version, name, applied_at (ms). */
export const RECORD_MIGRATION = "INSERT INTO stead_migrations (version, name, applied_at) VALUES (?, ?, ?)";
