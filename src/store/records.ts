/**
 * What a store keeps and what it is sent: its rows, the guarded mutations of the write protocol,
 * and the filters and requests of its reads and claims. The methods that take and return these are
 * the ports (`ports/`, one interface per concern); `types.ts` re-exports both.
 *
 * Glossary (see docs/ARCHITECTURE.md):
 * - run:     one execution of a definition with an input; `fence` grows at every claim.
 * - journal: the run's step rows, ordered by `seq` (the journal position the code asked for them at).
 * - wait:    a durable reason a run is parked (approval, signal, timer, quota, child); one row per wait.
 * - hold:    a durable stop only a person releases; one row per hold.
 * - event:   append-only, numbered, written in the same transaction as the change it reports.
 * - session: runs sharing a `sessionId` are its turns, numbered 1, 2, ... by the store; a turn is
 *            claimable only once every earlier turn of its session is terminal.
 *
 * The store knows nothing of workflows or agents. It applies {@link Mutation}s atomically, each
 * guarded by preconditions (a fence, a status, an open wait or hold), and claims runs under leases.
 * Payloads (input, output, results) arrive as JSON text already validated by the engine.
 */

/** Every status a run can have, in the order a run's life usually passes them. */
export const RUN_STATUSES = ["pending", "running", "waiting", "held", "paused", "completed", "failed", "cancelled"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const TERMINAL_STATUSES: readonly RunStatus[] = ["completed", "failed", "cancelled"];

/** Stores keep the kind as text and never reject one they do not list. */
export type StepKind = "step" | "effect" | "now" | "random" | "sleep" | "approval" | "signal" | "child" | "model" | "tool" | "quota";
/**
 * - intent:    an effect about to be dispatched, outcome not yet known (ambiguous if the run is resumed).
 * - retry:     an intent a person released with "retry": the next replay runs the effect as a new attempt.
 * - waiting:   a wait step whose wait row is still open.
 * - completed / failed: the recorded outcome, returned (or thrown) on every replay.
 */
export type StepStatus = "completed" | "failed" | "intent" | "retry" | "waiting";
/** `timer` and `quota` waits carry a wake time; the sweeper resolves them once it has passed. */
export type WaitKind = "approval" | "signal" | "timer" | "quota" | "child";
export type WaitStatus = "open" | "resolved" | "cancelled";
export type HoldKind = "process_failed" | "ambiguous_effect" | "definition_changed" | "nondeterminism" | "storage" | "recovery_gap";
export type HoldStatus = "open" | "released";

export interface RunRow {
  id: string;
  definition: string;
  /** Absolute path of the module that defines the definition, when known (lets the CLI load it). */
  module: string | null;
  /** Fingerprint recorded for this run; null means "adopt the fingerprint of the next claiming worker". */
  fingerprint: string | null;
  status: RunStatus;
  input: string;
  output: string | null;
  error: string | null;
  parentId: string | null;
  parentStepId: string | null;
  fence: number;
  leaseOwner: string | null;
  leaseExpiresAt: number | null;
  ownerHost: string | null;
  ownerPid: number | null;
  ownerStart: string | null;
  /** Consecutive claims that ended by lease loss with no step completing. */
  lostClaims: number;
  pauseRequested: boolean;
  /** The session this run is a turn of; null for a run outside any session. */
  sessionId: string | null;
  /** Position of this run in its session (1, 2, ...), assigned by `createRun`; null without a session. */
  turn: number | null;
  /** The directory the run works in (its workspace), as given when it started; null without one. */
  workspace: string | null;
  /**
   * JSON text of the run's output references ({@link OutputRefField}[]): fields of the output
   * stored once, in a journaled step, and left out of `output`. Null for a run that has not
   * completed, and for one completed before schema 13, whose output may hold them in-band.
   */
  outputRefs: string | null;
  createdAt: number;
  /** Last change of the run row itself (status, lease, flags); a step commit that changes none of it leaves it. */
  updatedAt: number;
}

/**
 * Why a listed row's sealed values could not be read: a run's own row, or an open wait or hold
 * of it, or a session's last turn (its error's code, and its message, which names the row).
 */
export interface RunDamage {
  code: "STEAD_DATA_TAMPERED";
  message: string;
}

/**
 * A run as `listRuns` gives it. `damaged` is set on a row whose sealed values fail to open: its
 * clear columns are as stored, while `input` is "null" and `output` and `error` null, none of
 * them read. Every other read of the run refuses with the same error instead.
 */
export interface ListedRun extends RunRow {
  damaged?: RunDamage;
}

/** A wait as a listing gives it: `damaged` on one whose sealed values fail to open, `request` and `result` then null, unread. */
export interface ListedWait extends WaitRow {
  damaged?: RunDamage;
}

/** A hold as a listing gives it: `damaged` on one whose sealed values fail to open, `reason` then "" and `details` "{}", unread. */
export interface ListedHold extends HoldRow {
  damaged?: RunDamage;
}

export interface StepRow {
  runId: string;
  seq: number;
  stepId: string;
  kind: StepKind;
  status: StepStatus;
  attempt: number;
  output: string | null;
  error: string | null;
  startedAt: number;
  completedAt: number | null;
  /** Checkpoint metadata of the step's last write (see {@link StepWrite.checkpoint}); null without any. */
  checkpoint: string | null;
}

export interface WaitRow {
  runId: string;
  name: string;
  kind: WaitKind;
  status: WaitStatus;
  /** Journal position of the wait's step. */
  seq: number;
  request: string | null;
  /**
   * What the request is, when Stead itself made it: "tool-call" for an agent's tool approval.
   * Null for a request of the user's code, and for waits opened before schema 13 (whose tool
   * approvals are recognised by the request's shape).
   */
  requestKind: string | null;
  wakeAt: number | null;
  result: string | null;
  createdAt: number;
  resolvedAt: number | null;
  resolvedBy: string | null;
}

export interface HoldRow {
  id: number;
  runId: string;
  kind: HoldKind;
  stepId: string | null;
  seq: number | null;
  reason: string;
  /** JSON: kind-specific facts and the choices offered. */
  details: string;
  status: HoldStatus;
  choice: string | null;
  createdAt: number;
  releasedAt: number | null;
  releasedBy: string | null;
}

export interface EventRow {
  seq: number;
  runId: string;
  type: string;
  at: number;
  /** JSON object. */
  data: string;
}

export interface NewRun {
  id: string;
  definition: string;
  module: string | null;
  fingerprint: string | null;
  input: string;
  parentId?: string | null;
  parentStepId?: string | null;
  status?: "pending" | "paused";
  /**
   * Makes the run the next turn of this session (`createRun` only: a mutation's `newRuns` entry
   * with a session is refused).
   */
  sessionId?: string | null;
  /** The run's workspace directory (see {@link RunRow.workspace}). */
  workspace?: string | null;
  createdAt: number;
  /** Journal rows the run starts with (a fork reuses its source's completed steps). */
  journal?: StepWrite[];
}

export interface StepWrite {
  seq: number;
  stepId: string;
  kind: StepKind;
  status: StepStatus;
  attempt: number;
  output?: string | null;
  error?: string | null;
  startedAt: number;
  completedAt?: number | null;
  /**
   * Checkpoint metadata stored beside the step's journal row: JSON text of a flat string map (at
   * most 4 KB), validated and redacted by the caller; the store keeps it as given. Each write of a
   * step sets the column to its own value, null when absent: an intent carrying metadata and its
   * outcome written without any leaves null, so a write that should keep the metadata repeats it.
   * Resolving a wait (which completes the wait's step) leaves it as it was.
   */
  checkpoint?: string | null;
}

export interface WaitOpen {
  name: string;
  kind: WaitKind;
  seq: number;
  request?: string | null;
  /** See {@link WaitRow.requestKind}. */
  requestKind?: string | null;
  wakeAt?: number | null;
}

/** Resolving a wait also completes its journal step (at the wait's `seq`) with `result` as output. */
export interface WaitResolve {
  name: string;
  /**
   * The wait's journal position, named by whoever resolves it (it read the wait): resolving with a
   * result completes the step at this position with the result as its output, and a layer that
   * binds a step's output to its position (sealing) binds it here. Such a layer refuses a result
   * without one rather than guess where it lands.
   */
  seq?: number;
  status: "resolved" | "cancelled";
  result?: string | null;
  by?: string | null;
}

export interface HoldOpen {
  kind: HoldKind;
  stepId?: string | null;
  seq?: number | null;
  reason: string;
  details: string;
}

export interface HoldRelease {
  id: number;
  choice: string;
  by?: string | null;
}

/**
 * A control command's idempotency key, recorded in the same transaction as what the command did,
 * so a repeat with the same key finds it (and the first result) or the command did not happen.
 * Keys are scoped by verb and `scope` (the run, the session, or the definition for a start).
 */
export interface IdempotencyWrite {
  verb: string;
  scope: string;
  key: string;
  /** Digest of the command's arguments, as the store's layers take it (args-digest.ts): a repeat with other arguments is refused. */
  digest: string;
  /** The arguments as people read them (bounded), to name the first use in a refusal. */
  summary: string;
  /** JSON: what the first call returned; a repeat returns it. */
  result: string;
  actor: string | null;
  /** Kept this long after the write (judged by the store's lease clock). */
  ttlMs: number;
}

export interface IdempotencyRow {
  verb: string;
  scope: string;
  key: string;
  digest: string;
  summary: string;
  result: string;
  actor: string | null;
  createdAt: number;
  expiresAt: number;
}

/**
 * An access token as the store keeps it: never the secret, only its SHA-256 (`hash`, 64 hex
 * digits). A name is unique among the tokens that are not revoked; a revoked token's row stays,
 * as the record of who made it and who revoked it. `role` is stored as given (the engine checks it).
 */
/** One key of an encrypted store, wrapped by a key-encryption key (ports/data-keys.ts). */
export interface DataKeyRow {
  id: string;
  /** Which key-encryption key wrapped it. */
  kekId: string;
  /** The key, encrypted by that key-encryption key (base64url; the provider's format). */
  wrapped: string;
  createdAt: number;
}

export interface TokenRow {
  id: string;
  name: string;
  role: string;
  hash: string;
  createdAt: number;
  createdBy: string | null;
  revokedAt: number | null;
  revokedBy: string | null;
  /** Coarse: written at most once per interval the caller chooses (TokenStore.touchToken). */
  lastUsedAt: number | null;
}

/** A token's row without its hash: what every read but a lookup by hash returns. */
export type TokenRecord = Omit<TokenRow, "hash">;

/** A new token's row: the rest starts null (not revoked, never used). */
export type TokenWrite = Pick<TokenRow, "id" | "name" | "role" | "hash" | "createdAt" | "createdBy">;

/**
 * A definition as a worker announces it (`DefinitionAnnouncements`). The store keeps the text as
 * given and never reads the schema: the engine checks inputs against it.
 */
export interface DefinitionAnnouncement {
  name: string;
  /** "workflow" or "agent"; kept as text, like every kind. */
  kind: string;
  fingerprint: string;
  /** Absolute path of the module on the announcing worker's machine, when known. */
  module: string | null;
  /** The JSON Schema of its input, as JSON text; null when it declares none. */
  inputSchema: string | null;
}

/** The worker an announcement is of. */
export interface AnnouncingWorker {
  workerId: string;
  host: string;
  pid: number;
}

/** A row of the catalog: a name and fingerprint some worker announced (kept after it stopped). */
export interface DefinitionRow {
  name: string;
  fingerprint: string;
  kind: string;
  module: string | null;
  inputSchema: string | null;
  firstAnnouncedAt: number;
  /** The last announcement or refresh of it by any worker. */
  lastSeenAt: number;
}

/** One worker's announcement of one definition. */
export interface AnnouncementRow {
  workerId: string;
  name: string;
  fingerprint: string;
  host: string;
  pid: number;
  announcedAt: number;
  seenAt: number;
  /** Counts as alive until then: the worker's refresh bound (see DefinitionAnnouncements). */
  expiresAt: number;
}

/** A catalog row with every announcement of it on record, each judged alive by the store's clock. */
export interface DefinitionRecord extends DefinitionRow {
  workers: (AnnouncementRow & { alive: boolean })[];
}

/**
 * Event types a later write may delete (Mutation.deleteEvents): live model text, replaced by its
 * step's journaled outcome. Every store's schema has an index for exactly these.
 */
export const COMPACTABLE_EVENTS = ["model.delta"] as const;

/** Events a later write of the same run replaces (see Mutation.deleteEvents): `type`, for one step attempt. */
export interface EventDelete {
  type: string;
  step: string;
  attempt: number;
}

/**
 * What made a workspace snapshot: `start` (the workspace as the run found it, at seq -1), `step`
 * (after the step at `seq` completed, committed with its outcome), `settle` (during the step at
 * `seq`, once the files were quiet).
 */
export type SnapshotSource = "start" | "step" | "settle";

export interface SnapshotWrite {
  /** Journal position: the step's (`step`, `settle`), -1 for `start`. */
  seq: number;
  /** The step at `seq`; null for `start`. */
  stepId: string | null;
  source: SnapshotSource;
  /**
   * Hash of the root tree object (a blob): the whole manifest, reachable from it. An encrypted store
   * keeps it keyed instead (`keyed:<the tree object's blob address>`, encryption/keyed-roots.ts),
   * which is what its reads return; workspace/tree-loader.ts reads either.
   */
  root: string;
  /** Files (and links) in the snapshot. */
  files: number;
  /** Total size of those files, uncompressed. */
  bytes: number;
  /** Files added, changed or removed since the previous snapshot of the run. */
  filesChanged: number;
  /** Compressed bytes of the blobs this capture added to the store (0: nothing new). */
  newBytes: number;
  /** JSON array of notes: files skipped (too large, unsupported type) and gaps (could not read). */
  notes: string | null;
  /** JSON object of checkpoint metadata (at most 4 KB), or null. */
  checkpoint: string | null;
  createdAt: number;
}

export interface SnapshotRow extends SnapshotWrite {
  /** The store's number for the row (grows with each snapshot written). */
  id: number;
  runId: string;
}

/** Which snapshot of a run: the `start`/`step` one at a journal position, or the one of a step id. */
export type SnapshotAt = { seq: number } | { stepId: string };

/** A content-addressed blob: `hash` names the uncompressed bytes; `data` is them compressed. */
export interface BlobWrite {
  hash: string;
  /** Uncompressed size. */
  size: number;
  data: Uint8Array;
}

export interface BlobRow {
  hash: string;
  size: number;
  data: Buffer;
}

export interface BlobInfo {
  hash: string;
  size: number;
  /** Compressed size as stored. */
  stored: number;
}

export interface EventWrite {
  type: string;
  data?: Record<string, unknown>;
}

/** Column changes to a run. `undefined` fields are left alone. */
/** A field of a run's output held by a journaled step of the same run (see RunRow.outputRefs). */
export interface OutputRefField {
  field: string;
  step: string;
  path: readonly (string | number)[];
}

export interface RunPatch {
  status?: RunStatus;
  output?: string | null;
  /** JSON text of OutputRefField[] (see RunRow.outputRefs). */
  outputRefs?: string | null;
  error?: string | null;
  fingerprint?: string | null;
  /** Clears lease owner and expiry (the fence number stays: it only grows). */
  releaseLease?: boolean;
  lostClaims?: number;
  pauseRequested?: boolean;
}

export interface MutationExpect {
  /** The writer's lease: fence, owner, and status 'running'. Checked in the same statement as the run update. */
  lease?: { fence: number; owner: string };
  status?: readonly RunStatus[];
  openWait?: string;
  openHold?: number;
}

/**
 * Changes to one run, applied all-or-nothing after their preconditions hold.
 * `optional` mutations whose preconditions fail are skipped without failing their unit.
 */
export interface Mutation {
  runId: string;
  expect?: MutationExpect;
  optional?: boolean;
  run?: RunPatch;
  steps?: StepWrite[];
  deleteStepsFrom?: number;
  waits?: WaitOpen[];
  resolveWaits?: WaitResolve[];
  /** Waits a cancellation closed (status `cancelled`) opened again: a cancelled run resumed. */
  reopenWaits?: string[];
  holds?: HoldOpen[];
  releaseHolds?: HoldRelease[];
  newRuns?: NewRun[];
  events?: EventWrite[];
  /**
   * The one exception to append-only events: this run's events of a compactable type for one step
   * attempt (live model text), deleted when the step's outcome is written in the same commit.
   */
  deleteEvents?: EventDelete;
  /** A control command's key: if the same key (verb, scope) is recorded and unexpired, the unit fails with reason `idempotency`. */
  idempotency?: IdempotencyWrite;
  /**
   * Workspace snapshots committed with this mutation (a step's snapshot rides on its outcome's
   * commit, so the journal position and the files agree). Refused on an `optional` mutation: the
   * store could not tell whether it applied. A snapshot at a (runId, seq) that already has one of
   * source `start` or `step` replaces it; `settle` snapshots accumulate.
   */
  snapshots?: SnapshotWrite[];
}

/** Mutations that commit together or not at all (e.g. a child's completion and its parent's wake-up). */
export type Unit = Mutation[];

export type UnitResult =
  | {
      ok: true;
      pauseRequested: boolean;
      /**
       * The unit as it was written, when a layer changed its payloads on the way (redaction): the
       * caller's unit is never changed in place, and one who must see what was stored (a step's
       * caller returns its output as recorded, so replay sees what live code saw) reads it here.
       * Absent: written as given.
       */
      written?: Unit;
    }
  | { ok: false; reason: "lease" | "status" | "wait" | "hold" | "missing" | "idempotency"; runId: string; status?: RunStatus };

export interface CommitOptions {
  /** Called inside the transaction after every unit was applied and before COMMIT (crash tests use it). */
  beforeCommit?: () => void;
}

export interface Owner {
  workerId: string;
  host: string;
  pid: number;
  /** Process start time, as the OS reports it: tells a reused pid from the original owner. */
  start: string;
}

export interface ClaimRequest {
  owner: Owner;
  /** Definition names this worker can execute. */
  definitions: readonly string[];
  limit: number;
  leaseMs: number;
  now: number;
  /** Claim only these runs (a CLI follow of one run). */
  runIds?: readonly string[];
}

export interface ClaimedRun {
  run: RunRow;
  /** Status before this claim: 'running' means the previous owner lost its lease. */
  previousStatus: RunStatus;
  journal: StepRow[];
}

export interface LeaseInfo {
  runId: string;
  fence: number;
  leaseOwner: string;
  ownerHost: string | null;
  ownerPid: number | null;
  ownerStart: string | null;
  leaseExpiresAt: number | null;
}

/**
 * Which runs a listing or a count takes: every field given narrows, an absent one does not. Times
 * are ms since the epoch; a range is half-open (`…Since` inclusive, `…Before` exclusive).
 */
export interface RunFilter {
  /** Any of these statuses; an empty list is no filter. */
  status?: readonly RunStatus[];
  definition?: string;
  sessionId?: string;
  parentId?: string;
  createdSince?: number;
  createdBefore?: number;
  updatedSince?: number;
  updatedBefore?: number;
  /** Ids starting with this text, taken literally (`%` and `_` are characters, not wildcards). */
  idPrefix?: string;
}

/** The key a listing is ordered by; `id` breaks ties, so the order is total. */
export type RunSortKey = "createdAt" | "updatedAt";
export type SortOrder = "asc" | "desc";

/** One page of a run listing (see store/listing-cursor.ts for the limits and the cursor). */
export interface RunQuery extends RunFilter {
  /** Default `createdAt`. */
  sort?: RunSortKey;
  /** Default `desc` (newest first). */
  order?: SortOrder;
  /** Runs per page: default DEFAULT_PAGE_SIZE, at most MAX_PAGE_SIZE (more is refused). */
  limit?: number;
  /** The `nextCursor` of the page before, given with the same filters, sort and order. */
  cursor?: string;
}

export interface RunPage {
  /** A row whose sealed values fail to open is listed marked `damaged`, so one cannot hide the others. */
  runs: ListedRun[];
  /** Where the next page starts; null when this page is the last. Opaque: pass it back unchanged. */
  nextCursor: string | null;
}

/** A journal entry's small fields: what a listing shows of a run's last step, without its payloads. */
export interface StepHead {
  runId: string;
  seq: number;
  stepId: string;
  kind: StepKind;
  status: StepStatus;
  attempt: number;
}

/** What a listing shows of a run besides its row, read in a bounded number of rows per run. */
export interface RunActivity {
  runId: string;
  /** The journal's last entry (highest seq); null for an empty journal. */
  lastStep: StepHead | null;
  /** The time of the run's latest event: its last activity (a step, a claim, a wait, live model text). */
  lastEventAt: number | null;
  /** A wait or hold whose sealed values fail to open is listed marked, so one cannot hide the others. */
  openWaits: ListedWait[];
  openHolds: ListedHold[];
}

export interface SessionFilter {
  /** Only this session (an unknown one gives an empty list). */
  sessionId?: string;
  limit?: number;
}

/** A session as its turns (runs) show it. Terminal: completed, failed or cancelled. */
export interface SessionSummary {
  sessionId: string;
  /** Definition of its latest turn. */
  definition: string;
  /** Number of turns. */
  turns: number;
  /** Turns not terminal yet (the one running or parked, and those queued behind it). */
  open: number;
  /** The lowest turn not terminal: the one that runs (or waits) now. */
  current: { runId: string; turn: number; status: RunStatus } | null;
  /** The highest terminal turn, with its error (JSON text) if it failed or was cancelled. */
  last: { runId: string; turn: number; status: RunStatus; error: string | null } | null;
  /** Creation of its first turn. */
  createdAt: number;
  /** Latest `updatedAt` of its turns. */
  updatedAt: number;
  /**
   * Set when its last turn's sealed error fails to open: `last.error` is then null, unread. A
   * listing marks it so that one cannot hide the other sessions; reading its turns refuses.
   */
  damaged?: RunDamage;
}

/**
 * `events()`'s filter. Hazard: `afterSeq` follows numbering, not commit order. On Postgres a number
 * is taken before its transaction commits, so a follower of the whole store (or of several runs)
 * that moves past a number can skip an event whose lower number commits later. One run's numbers do
 * follow its commits (every writer of a run's events holds the run's row lock until it commits).
 * A follower reads `eventsAfter` instead.
 */
export interface EventFilter {
  runId?: string;
  afterSeq?: number;
  limit?: number;
}

/** `eventsAfter()`'s filter. */
export interface EventStreamFilter {
  /** Only this run's events. */
  runId?: string;
  /** Only these runs' events (a session's turns); not with `runId`. */
  runIds?: readonly string[];
  /** At most this many events (1 to EVENT_PAGE_MAX; default EVENT_PAGE_DEFAULT). */
  limit?: number;
}

/** One read of an event stream. */
export interface EventPage {
  /** New events, each once, in an order consistent with their commits (numbers grow within a run). */
  events: EventRow[];
  /**
   * Where the next read continues: pass it back unchanged. Opaque, printable ASCII without spaces
   * (an SSE `id:`); it grows with the transactions a Postgres server had in progress at the read.
   */
  position: string;
  /**
   * Where a read continues after each event: `positions[i]` follows `events[i]` (a live stream's
   * per-event SSE id), so a follower cut off inside a page resumes with no gap and no repeat. The
   * last one equals `position`; a page with no events has none.
   */
  positions: string[];
}

export const EVENT_PAGE_DEFAULT = 1000;
export const EVENT_PAGE_MAX = 10_000;

export interface HoldFilter {
  runId?: string;
  status?: HoldStatus;
  kind?: HoldKind;
  /**
   * A listing's read: a hold whose sealed values fail to open comes back marked `damaged`
   * (ListedHold) instead of failing the whole read. Without it, such a hold fails the read: the
   * control commands act on what they read, and must never act on a hold they could not read.
   */
  markDamaged?: boolean;
}

/**
 * Tables `stead export` / `stead import` move, in dump order. One list for every store: a table a
 * later migration adds is described in `schema/tables.ts` and named here, nowhere else.
 */
export const TRANSFER_TABLES = ["runs", "steps", "waits", "holds", "events", "blobs", "snapshots", "idempotency_keys", "tokens"] as const;
export type TransferTable = (typeof TRANSFER_TABLES)[number];
/** A column's value in a transfer row: JSON-safe, the same in every dialect (integers as numbers, flags as booleans). */
export type TransferValue = string | number | boolean | null;
/** One row keyed by column name (the migrations' snake_case names). */
export type TransferRow = Record<string, TransferValue>;
/** The primary-key values of a row, in key-column order (`transfer/tables.ts`): where the next page starts after. */
export type RowKey = readonly (string | number)[];

/**
 * A blob's touch mark is refreshed when older than this: rewriting a large row at every capture
 * would cost more than the blob. gc's grace period must exceed it plus the longest time from a
 * capture to its snapshot's commit.
 */
export const BLOB_TOUCH_INTERVAL_MS = 60_000;
