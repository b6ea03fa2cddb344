/**
 * What both SQL stores share above their dialect: each port both have is an object of its own
 * (built over the store's connection, in the dialect folder's file named for the port), and the
 * Store members delegate to it here, once. A store class supplies `ports` in its constructor and
 * implements the rest (opening, migrating, the commit path, its dialect's own ports).
 */
import type {
  AnnouncingWorker,
  BlobInfo,
  BlobRow,
  BlobWrite,
  ClaimedRun,
  ClaimRequest,
  ClaimsAndLeases,
  DataKeyRow,
  DataKeys,
  DefinitionAnnouncement,
  DefinitionAnnouncements,
  DefinitionRecord,
  EventFilter,
  EventPage,
  EventRow,
  EventStreamFilter,
  HoldFilter,
  HoldRow,
  IdempotencyKeys,
  IdempotencyRow,
  LeaseInfo,
  RetentionOptions,
  RetentionResult,
  RowKey,
  RunActivity,
  RunFilter,
  RunPage,
  RunQuery,
  RunReads,
  RunRetention,
  RunRow,
  SessionFilter,
  SessionSummary,
  SnapshotAt,
  SnapshotRow,
  SnapshotsAndBlobs,
  StepRow,
  StoreTally,
  Tallies,
  TokenRecord,
  TokenRow,
  TokenStore,
  TokenWrite,
  TransferRow,
  TransferRows,
  TransferTable,
  WaitRow,
} from "./types.js";

/** The port objects a store class supplies. */
export interface StorePorts {
  claims: Omit<ClaimsAndLeases, "leaseClock">;
  runReads: RunReads;
  rows: TransferRows;
  tallies: Tallies;
  idempotency: IdempotencyKeys;
  runRetention: RunRetention;
  blobStore: SnapshotsAndBlobs;
  tokens: TokenStore;
  keys: DataKeys;
  definitions: DefinitionAnnouncements;
}

export abstract class PortedStore {
  /** Set by the store's constructor, before any member is called. */
  protected abstract readonly ports: StorePorts;

  getRun(id: string): Promise<RunRow | undefined> {
    return this.ports.runReads.getRun(id);
  }

  listRuns(query: RunQuery = {}): Promise<RunPage> {
    return this.ports.runReads.listRuns(query);
  }

  countRuns(filter: RunFilter = {}): Promise<number> {
    return this.ports.runReads.countRuns(filter);
  }

  runActivity(runIds: readonly string[]): Promise<RunActivity[]> {
    return this.ports.runReads.runActivity(runIds);
  }

  completedStep(runId: string, stepId: string): Promise<StepRow | undefined> {
    return this.ports.runReads.completedStep(runId, stepId);
  }

  journal(runId: string): Promise<StepRow[]> {
    return this.ports.runReads.journal(runId);
  }

  waits(runId: string): Promise<WaitRow[]> {
    return this.ports.runReads.waits(runId);
  }

  dueTimers(now: number, limit: number): Promise<WaitRow[]> {
    return this.ports.runReads.dueTimers(now, limit);
  }

  holds(filter: HoldFilter = {}): Promise<HoldRow[]> {
    return this.ports.runReads.holds(filter);
  }

  events(filter: EventFilter = {}): Promise<EventRow[]> {
    return this.ports.runReads.events(filter);
  }

  eventsAfter(position: string | null, filter: EventStreamFilter = {}): Promise<EventPage> {
    return this.ports.runReads.eventsAfter(position, filter);
  }

  listSessions(filter: SessionFilter = {}): Promise<SessionSummary[]> {
    return this.ports.runReads.listSessions(filter);
  }

  tally(): Promise<StoreTally> {
    return this.ports.tallies.tally();
  }

  idempotencyKey(verb: string, scope: string, key: string): Promise<IdempotencyRow | undefined> {
    return this.ports.idempotency.idempotencyKey(verb, scope, key);
  }

  pruneIdempotencyKeys(): Promise<number> {
    return this.ports.idempotency.pruneIdempotencyKeys();
  }

  createToken(t: TokenWrite): Promise<TokenRecord> {
    return this.ports.tokens.createToken(t);
  }

  listTokens(): Promise<TokenRecord[]> {
    return this.ports.tokens.listTokens();
  }

  revokeToken(name: string, by: string | null, at: number): Promise<TokenRecord | undefined> {
    return this.ports.tokens.revokeToken(name, by, at);
  }

  findTokenByHash(hash: string): Promise<TokenRow | undefined> {
    return this.ports.tokens.findTokenByHash(hash);
  }

  touchToken(id: string, at: number, minIntervalMs: number): Promise<boolean> {
    return this.ports.tokens.touchToken(id, at, minIntervalMs);
  }

  dataKeys(): Promise<DataKeyRow[]> {
    return this.ports.keys.dataKeys();
  }

  addDataKeys(rows: readonly DataKeyRow[]): Promise<void> {
    return this.ports.keys.addDataKeys(rows);
  }

  rewrapDataKeys(rows: readonly Pick<DataKeyRow, "id" | "kekId" | "wrapped">[]): Promise<void> {
    return this.ports.keys.rewrapDataKeys(rows);
  }

  replaceDataKeys(rows: readonly DataKeyRow[]): Promise<void> {
    return this.ports.keys.replaceDataKeys(rows);
  }

  announceDefinitions(worker: AnnouncingWorker, definitions: readonly DefinitionAnnouncement[], ttlMs: number, now: number): Promise<void> {
    return this.ports.definitions.announceDefinitions(worker, definitions, ttlMs, now);
  }

  refreshAnnouncements(workerId: string, ttlMs: number, now: number): Promise<number> {
    return this.ports.definitions.refreshAnnouncements(workerId, ttlMs, now);
  }

  withdrawAnnouncements(workerId: string): Promise<void> {
    return this.ports.definitions.withdrawAnnouncements(workerId);
  }

  listDefinitions(filter: { name?: string }, now: number): Promise<DefinitionRecord[]> {
    return this.ports.definitions.listDefinitions(filter, now);
  }

  pruneAnnouncements(graceMs: number, now: number): Promise<number> {
    return this.ports.definitions.pruneAnnouncements(graceMs, now);
  }

  claim(req: ClaimRequest): Promise<ClaimedRun[]> {
    return this.ports.claims.claim(req);
  }

  claimable(req: Omit<ClaimRequest, "owner" | "leaseMs">): Promise<ClaimedRun[]> {
    return this.ports.claims.claimable(req);
  }

  renewLeases(owner: string, leases: readonly { runId: string; fence: number }[], leaseMs: number, now: number): Promise<string[]> {
    return this.ports.claims.renewLeases(owner, leases, leaseMs, now);
  }

  leasesOnHost(host: string): Promise<LeaseInfo[]> {
    return this.ports.claims.leasesOnHost(host);
  }

  expireLease(runId: string, fence: number, reason: string): Promise<boolean> {
    return this.ports.claims.expireLease(runId, fence, reason);
  }

  readRows(table: TransferTable, afterKey: RowKey | null, limit: number): Promise<TransferRow[]> {
    return this.ports.rows.readRows(table, afterKey, limit);
  }

  writeRows(table: TransferTable, rows: readonly TransferRow[]): Promise<void> {
    return this.ports.rows.writeRows(table, rows);
  }

  putBlobs(blobs: readonly BlobWrite[]): Promise<void> {
    return this.ports.blobStore.putBlobs(blobs);
  }

  missingBlobs(hashes: readonly string[]): Promise<string[]> {
    return this.ports.blobStore.missingBlobs(hashes);
  }

  getBlobs(hashes: readonly string[]): Promise<BlobRow[]> {
    return this.ports.blobStore.getBlobs(hashes);
  }

  snapshots(runId: string): Promise<SnapshotRow[]> {
    return this.ports.blobStore.snapshots(runId);
  }

  getSnapshot(runId: string, at: SnapshotAt): Promise<SnapshotRow | undefined> {
    return this.ports.blobStore.getSnapshot(runId, at);
  }

  snapshotRoots(): Promise<string[]> {
    return this.ports.blobStore.snapshotRoots();
  }

  pruneSnapshots(keepSteps: number): Promise<number> {
    return this.ports.blobStore.pruneSnapshots(keepSteps);
  }

  storeTime(): Promise<number> {
    return this.ports.blobStore.storeTime();
  }

  listBlobs(after: string | null, limit: number, touchedBefore: number): Promise<BlobInfo[]> {
    return this.ports.blobStore.listBlobs(after, limit, touchedBefore);
  }

  deleteBlobs(hashes: readonly string[], touchedBefore: number): Promise<{ count: number; bytes: number }> {
    return this.ports.blobStore.deleteBlobs(hashes, touchedBefore);
  }

  finishedRoots(endedBefore: number, after: string | null, limit: number): Promise<string[]> {
    return this.ports.runRetention.finishedRoots(endedBefore, after, limit);
  }

  deleteRunTrees(roots: readonly string[], options: RetentionOptions): Promise<RetentionResult> {
    return this.ports.runRetention.deleteRunTrees(roots, options);
  }
}
