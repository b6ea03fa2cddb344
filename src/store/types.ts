/**
 * What a store speaks, in one import: its records (`records.ts`: rows, the guarded mutations of
 * the write protocol, filters) and its ports (`ports/`: one interface per concern, `Store` all of
 * them). See README.md in this folder.
 */

export * from "./records.js";
export type { StorageCheck } from "./faults.js";
export type { StoreInfo, StoreLifecycle } from "./ports/lifecycle.js";
export type { RunReads } from "./ports/run-reads.js";
export type { Commits } from "./ports/commits.js";
export type { ClaimsAndLeases } from "./ports/claims.js";
export type { IdempotencyKeys } from "./ports/idempotency-keys.js";
export type { DefinitionAnnouncements } from "./ports/definitions.js";
export type { SnapshotsAndBlobs } from "./ports/snapshots-blobs.js";
export type { StorageReserve, StorageRoom } from "./ports/storage-room.js";
export type { BackupRecord, StoreBackups } from "./ports/backups.js";
export type { EraseReport, StoreErasure } from "./ports/erasure.js";
export type { TokenStore } from "./ports/tokens.js";
export type { DataKeys, DumpSigner, KeyedDigest } from "./ports/data-keys.js";
export type { TransferRows } from "./ports/transfer-rows.js";
export type { RetentionOptions, RetentionResult, RunRetention } from "./ports/retention.js";
export type { WorkerAttachment, WorkerPresence } from "./ports/worker-presence.js";
export type { Wakeups } from "./ports/wakeups.js";
export type { StoreTally, Tallies } from "./ports/tallies.js";
export type { Store } from "./ports/store.js";
