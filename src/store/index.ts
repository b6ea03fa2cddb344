import { SteadError } from "../errors.js";
import { DEFAULT_SQLITE_PATH, SqliteStore } from "./sqlite/index.js";
import type { Store } from "./types.js";

export type * from "./types.js";
export { TERMINAL_STATUSES } from "./types.js";
export { SqliteStore, openSqliteStore, DEFAULT_SQLITE_PATH } from "./sqlite/index.js";
export type { SqliteStoreOptions } from "./sqlite/index.js";

export interface OpenStoreOptions {
  /** Create the store when it does not exist. Default true. */
  create?: boolean;
}

/**
 * Opens a store from a location: a file path (SQLite) or, later, a postgres:// URL.
 * Precedence when `location` is undefined: STEAD_DATABASE_URL, STEAD_STORE, then `.stead/stead.db`.
 */
export function openStore(location?: string, options: OpenStoreOptions = {}): Store {
  const loc = location ?? process.env.STEAD_DATABASE_URL ?? process.env.STEAD_STORE ?? DEFAULT_SQLITE_PATH;
  if (/^postgres(ql)?:\/\//i.test(loc)) {
    throw new SteadError("STEAD_BAD_INPUT", "the Postgres store is not available in this version of stead", {
      fix: "use an SQLite store path (the default is .stead/stead.db)",
    });
  }
  const path = loc.startsWith("file:") ? loc.slice("file:".length) : loc;
  return new SqliteStore({ path, create: options.create ?? true });
}
