/**
 * The Store: every port together. Everything the engine and worker persist goes through it; a
 * consumer that needs one concern takes that port alone. Implementations: `sqlite/` (embedded
 * default) and `postgres/`; each must pass the conformance suite (`conformance/`) unchanged.
 */
import type { StoreBackups } from "./backups.js";
import type { ClaimsAndLeases } from "./claims.js";
import type { Commits } from "./commits.js";
import type { DataKeys } from "./data-keys.js";
import type { DefinitionAnnouncements } from "./definitions.js";
import type { StoreErasure } from "./erasure.js";
import type { IdempotencyKeys } from "./idempotency-keys.js";
import type { StoreLifecycle } from "./lifecycle.js";
import type { RunReads } from "./run-reads.js";
import type { RunRetention } from "./retention.js";
import type { SnapshotsAndBlobs } from "./snapshots-blobs.js";
import type { StorageReserve, StorageRoom } from "./storage-room.js";
import type { Tallies } from "./tallies.js";
import type { TokenStore } from "./tokens.js";
import type { TransferRows } from "./transfer-rows.js";
import type { Wakeups } from "./wakeups.js";
import type { WorkerPresence } from "./worker-presence.js";

export interface Store
  extends StoreLifecycle,
    RunReads,
    Commits,
    ClaimsAndLeases,
    IdempotencyKeys,
    DefinitionAnnouncements,
    SnapshotsAndBlobs,
    StorageRoom,
    TokenStore,
    DataKeys,
    Tallies,
    TransferRows,
    RunRetention,
    Partial<WorkerPresence>,
    Partial<Wakeups>,
    Partial<StorageReserve>,
    Partial<StoreBackups>,
    Partial<StoreErasure> {}
