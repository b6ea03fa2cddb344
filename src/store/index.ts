import { PostgresStore } from "./postgres/index.js";
import { DEFAULT_SQLITE_PATH, SqliteStore } from "./sqlite/index.js";
import type { Store } from "./types.js";

export type * from "./types.js";
export { TERMINAL_STATUSES } from "./types.js";
export { SqliteStore, openSqliteStore, DEFAULT_SQLITE_PATH } from "./sqlite/index.js";
export type { SqliteStoreOptions } from "./sqlite/index.js";
export { PostgresStore, openPostgresStore } from "./postgres/index.js";
export type { PostgresStoreOptions } from "./postgres/index.js";

export interface OpenStoreOptions {
  /** Create the store when it does not exist. Default true. */
  create?: boolean;
  /** Open an existing store for reading only: no migration (an older schema is refused), and for SQLite a read-only connection. */
  readonly?: boolean;
}

/**
 * Opens a store from a location: a file path (SQLite) or a postgres:// URL (Postgres).
 * Precedence when `location` is undefined: STEAD_DATABASE_URL, STEAD_STORE, then `.stead/stead.db`.
 */
export function openStore(location?: string, options: OpenStoreOptions = {}): Store {
  const where = storeLocation(location);
  const readonly = options.readonly ?? false;
  if (where.dialect === "postgres") return new PostgresStore({ connectionString: where.url, create: options.create ?? true, readonly });
  return new SqliteStore({ path: where.path, create: options.create ?? true, readonly });
}

/** Which store `openStore(location)` opens: a Postgres URL, or an SQLite file's path (as given: relative to the working directory). */
export function storeLocation(location?: string): { dialect: "postgres"; url: string } | { dialect: "sqlite"; path: string } {
  const loc = location ?? process.env.STEAD_DATABASE_URL ?? process.env.STEAD_STORE ?? DEFAULT_SQLITE_PATH;
  if (/^postgres(ql)?:\/\//i.test(loc)) return { dialect: "postgres", url: loc };
  return { dialect: "sqlite", path: loc.startsWith("file:") ? loc.slice("file:".length) : loc };
}
