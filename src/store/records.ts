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

export type RunStatus = "pending" | "running" | "waiting" | "held" | "paused" | "completed" | "failed" | "cancelled";
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
  createdAt: number;
  /** Last change of the run row itself (status, lease, flags); a step commit that changes none of it leaves it. */
  updatedAt: number;
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
  wakeAt?: number | null;
}

/** Resolving a wait also completes its journal step (at the wait's `seq`) with `result` as output. */
export interface WaitResolve {
  name: string;
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
  /** Digest of the command's arguments: a repeat with other arguments is refused. */
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
  /** Hash of the root tree object (a blob): the whole manifest, reachable from it. */
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
export interface RunPatch {
  status?: RunStatus;
  output?: string | null;
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
  | { ok: true; pauseRequested: boolean }
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

export interface RunFilter {
  status?: readonly RunStatus[];
  definition?: string;
  parentId?: string;
  /** Only this session's turns, ordered by turn ascending (instead of newest first). */
  sessionId?: string;
  limit?: number;
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
}

export interface EventFilter {
  runId?: string;
  afterSeq?: number;
  limit?: number;
}

export interface HoldFilter {
  runId?: string;
  status?: HoldStatus;
  kind?: HoldKind;
}

/**
 * Tables `stead export` / `stead import` move, in dump order. One list for every store: a table a
 * later migration adds is described in `schema/tables.ts` and named here, nowhere else.
 */
export const TRANSFER_TABLES = ["runs", "steps", "waits", "holds", "events", "blobs", "snapshots", "idempotency_keys"] as const;
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
