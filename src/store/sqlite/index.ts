export { SqliteStore, openSqliteStore, DEFAULT_SQLITE_PATH } from "./sqlite-store.js";
export type { SqliteStoreOptions } from "./sqlite-store.js";
export { MIGRATIONS, LATEST_VERSION } from "./migrations.js";
export { sealBackup } from "./backup.js";
