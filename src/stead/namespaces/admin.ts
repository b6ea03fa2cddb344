/** `stead.admin`: the store as a whole: counts, garbage collection, health, dumps and backups. */
import type { Writable } from "node:stream";
import type { StoreInfo, StoreTally } from "../../store/types.js";
import type { DumpInput, ExportOptions, ExportSummary, ImportOptions, ImportSummary, VerifiedDump } from "../../store/transfer/index.js";
import type { GcOptions, GcResult } from "../../workspace/index.js";
import type { BackupSummary, CheckedBackup, RestoreSummary } from "../backup.js";
import type { EraseOptions, Erased } from "../verb-options.js";

export interface SteadAdmin {
  /** Runs by status and open waits and holds by kind: grouped counts, never a row per run (`/metrics` reads them). */
  tally(): Promise<StoreTally>;
  /** Deletes workspace blobs no snapshot refers to (with `keepSteps`, first prunes finished runs' older snapshots); `erase` as for `runs.deleteFinished`. */
  gc(options?: GcOptions & EraseOptions): Promise<GcResult & Erased>;
  /** The store's location, dialect and schema version. */
  storeInfo(): Promise<StoreInfo>;
  /**
   * The store as it answers now (reached anew, not remembered from the first call) with the
   * schema this code writes: what a server's /readyz reports. Refused: a store that cannot be
   * reached, or whose schema is older (STEAD_STORE_TOO_OLD: it was replaced since it was opened)
   * or newer than this code's.
   */
  readiness(): Promise<StoreInfo>;
  /**
   * Writes every row of the store to `out` as a dump (`out` is not ended). Refused while a worker
   * holds a live lease; a lease whose process is known to be gone (same host) does not count.
   */
  exportDump(out: Writable, options?: Pick<ExportOptions, "allowLive" | "pageRows">): Promise<ExportSummary>;
  /** An online copy of this (SQLite) store in a new file, checked and carrying its own digests (see backup.ts). */
  backup(file: string): Promise<BackupSummary>;
  /**
   * Loads a checked backup into this store, which must hold no rows, and verifies every table
   * against it. Its access tokens come only with `withTokens` (see importDump).
   */
  restoreBackup(backup: CheckedBackup, options?: Pick<ImportOptions, "withTokens">): Promise<RestoreSummary>;
  /**
   * Loads a dump into this store, which must hold no rows, and verifies every table against it;
   * an encrypted store's dump is checked against its signature with the keys this instance finds.
   * Its access tokens come only with `withTokens`: a token is who may act on the store, and a
   * plain dump's digests do not tell an edited dump from an exported one.
   */
  importDump(dump: VerifiedDump | DumpInput, options?: Pick<ImportOptions, "withTokens">): Promise<ImportSummary>;
}

export const ADMIN_VERBS = {
  tally: "tally",
  gc: "gc",
  storeInfo: "storeInfo",
  readiness: "readiness",
  exportDump: "exportDump",
  backup: "backup",
  restoreBackup: "restoreBackup",
  importDump: "importDump",
} as const;
