/**
 * Online backups of a store into one file. Optional in `Store`: the SQLite store has them; a
 * Postgres database is backed up with the database's own tools (pg_dump, base backups), and moved
 * between stores with `stead export` / `import`.
 */

/** What a backup records about itself, inside the copy, so that a restore can check it. */
export interface BackupRecord {
  /** Where the copy was taken from, and when (ms since the epoch). */
  source: string;
  takenAt: number;
  schemaVersion: number;
  /** The copy's transfer tables: row counts and digests, as a dump's trailer records them. */
  tables: Record<string, { rows: number; sha256: string }>;
  /** An encrypted store's backup only: its signature, made with the store's key (store/transfer/signing.ts). */
  signature?: string;
}

export interface StoreBackups {
  /**
   * Writes a consistent copy of the whole store, as of one instant, into `file` (which must not
   * exist), while other connections keep writing. Fails with STEAD_BAD_PATH when `file` cannot be
   * written or its file system fills; a failed copy may leave a partial `file` for the caller to
   * remove.
   */
  backupInto(file: string): Promise<void>;
  /** SQLite's own check of the file's pages and indexes: the problems it lists, none when sound. */
  integrityProblems(): Promise<string[]>;
  /** The record a backup carries (undefined for a store that is not a backup). */
  backupRecord(): Promise<BackupRecord | undefined>;
}
