/**
 * The HTTP API's shapes (`/api/v1`), declared once: every JSON response and request body, and
 * `ApiRoutes`, which route answers which. The server's route table checks each handler's result
 * against `ApiRoutes` (server/route-table.ts), the client's methods return these types, and the
 * console reads them through the client; test/api-types.test.ts holds the three equal.
 *
 * Layering: this file is a layer of its own, `wire`, below every other (test/architecture.test.ts).
 * It imports nothing and holds types only (it compiles to nothing, so importing it loads nothing),
 * and every layer may import it, the client included. It lives in src/client/ because the client is
 * published alone (`@stead/client`) and must carry it. The views the engine builds for its callers
 * ARE the wire shapes, so they are declared here and the engine re-exports them (engine/runs/views.ts,
 * sessions, definitions, workers, open waits, `why`'s ways out, control results; agent/transcript.ts).
 * What lower layers own with a runtime list beside it (the store's statuses and kinds, RunDamage, its
 * tally; a snapshot's fields) is copied here, and the test holds each copy equal to its original.
 *
 * Hazard: a change here is a change of the public API: a field renamed breaks every client.
 */

/** Every status a run can have (the store's RunStatus). */
export type RunStatus = "pending" | "running" | "waiting" | "held" | "paused" | "completed" | "failed" | "cancelled";
export type WaitKind = "approval" | "signal" | "timer" | "quota" | "child";
export type HoldKind = "process_failed" | "ambiguous_effect" | "definition_changed" | "nondeterminism" | "storage" | "recovery_gap";
/** How a person releases a hold (`POST /runs/:runId/release`'s `choice`). */
export type ReleaseChoice = "retry" | "skip" | "result" | "accept-change";
export type Role = "viewer" | "operator" | "admin";

/** Why a listed run, wait, hold or session could not be read: its code, and a message naming the row. */
export interface RunDamage {
  code: "STEAD_DATA_TAMPERED";
  message: string;
}

/** An error as journaled: enough to rethrow an equivalent error on replay, and to tell what was thrown. */
export interface ErrorRecord {
  name: string;
  message: string;
  code?: string;
  /** What the user can do (a SteadError's `fix`), kept so `stead why` can say it long after. */
  fix?: string;
  /** The step the error came from, when it names one (a step's failure rethrown by the run). */
  stepId?: string;
  stack?: string;
  /** The thrown value's own fields that could be read safely, bounded (not kept for Stead's own errors). */
  fields?: Record<string, unknown>;
}

/** A run as the API returns it: payloads parsed. */
export interface RunInfo {
  id: string;
  definition: string;
  status: RunStatus;
  input: unknown;
  output: unknown;
  error: ErrorRecord | null;
  parentId: string | null;
  /** The session this run is a turn of, and its turn number; null for a run outside sessions. */
  sessionId: string | null;
  turn: number | null;
  fingerprint: string | null;
  module: string | null;
  fence: number;
  lease: { owner: string; expiresAt: number | null; host: string | null; pid: number | null } | null;
  lostClaims: number;
  pauseRequested: boolean;
  createdAt: number;
  updatedAt: number;
  /**
   * In a listing only: a sealed value of the run failed to open (its bytes were changed, or the
   * key is not the one it was sealed with); the message names the row. When it is the run's own
   * row, `input`, `output` and `error` are null, unread; a listing that reads the run's open waits
   * and holds (`stead ps`, `GET /runs`) marks the run for a damaged one of those too, its other
   * fields as stored. Reading the run itself refuses with this error.
   */
  damaged?: RunDamage;
}

export interface StepView {
  seq: number;
  id: string;
  kind: string;
  status: string;
  attempt: number;
  output: unknown;
  error: ErrorRecord | null;
  startedAt: number;
  completedAt: number | null;
}

/** An approval's request kind: an agent's tool call (a decision may carry edited `input` and `scope`), or the run's own code's. */
export type RequestKind = "tool-call" | "code";

export interface WaitView {
  name: string;
  kind: WaitKind;
  status: string;
  request: unknown;
  /** An approval's (see RequestKind); null for other kinds. */
  requestKind: RequestKind | null;
  wakeAt: number | null;
  result: unknown;
  createdAt: number;
  resolvedAt: number | null;
  resolvedBy: string | null;
  /** In a listing only: its sealed values failed to open; `request` and `result` are then absent, unread. */
  damaged?: RunDamage;
}

export interface HoldView {
  id: number;
  runId: string;
  kind: HoldKind;
  stepId: string | null;
  reason: string;
  details: Record<string, unknown>;
  status: string;
  choice: string | null;
  createdAt: number;
  releasedAt: number | null;
  releasedBy: string | null;
  /** In a listing only: its sealed values failed to open; `reason` is then "" and `details` {}, unread. */
  damaged?: RunDamage;
}

export interface EventView {
  seq: number;
  runId: string;
  type: string;
  at: number;
  data: Record<string, unknown>;
}

/** A run in a listing (`GET /runs`): its fields, its journal's last entry and its last event's time. */
export interface ListedRunView extends RunInfo {
  /** The journal's last entry; null before the first. */
  lastStep: { seq: number; id: string; kind: string; status: string; attempt: number } | null;
  /** The time of its latest event (a step, a claim, a wait, live model text): its last activity. */
  lastEventAt: number | null;
}

/** One page of runs; `nextCursor` (null on the last page) asks for the next with the same filter. */
export interface RunList {
  runs: ListedRunView[];
  nextCursor: string | null;
}

/** The run listing's filter, sort and page: the query of `GET /runs`, times in ms since the epoch. */
export interface RunFilter {
  status?: RunStatus[];
  definition?: string;
  sessionId?: string;
  parentId?: string;
  createdSince?: number;
  createdBefore?: number;
  updatedSince?: number;
  updatedBefore?: number;
  idPrefix?: string;
  sort?: "createdAt" | "updatedAt";
  order?: "asc" | "desc";
  limit?: number;
  cursor?: string;
}

interface Way<V extends string, A extends object, S extends string = never> {
  /** What taking it does, for a person. */
  what: string;
  verb: V;
  /** The run it acts on: the explained run, or (`why` of a child) the child. */
  runId: string;
  args: A;
  /**
   * Arguments of the call a person must supply, by the control API's names (`approve`'s `input`,
   * `deny`'s `reason`, `signal`'s `payload`, `release`'s `result`). Empty when the call is complete.
   */
  supply: readonly S[];
}

type NoArgs = Record<string, never>;

/** Make sure a worker that has the run's definition runs (`module`: the file the run recorded, when known). */
export type StartWorker = Way<"worker", { definition: string; module: string | null }>;
/** Follow the run's events as they happen. */
export type FollowEvents = Way<"events", { follow: true }>;
/** A control call on the run with no argument beyond it (`get`: the run with its output; `why`: its explanation). */
export type PlainCall = Way<"get" | "why" | "pause" | "resume" | "retry" | "cancel" | "fork", NoArgs>;
/** Approve the wait `wait` (for the rest of the run with `scope: "run"`; with edited tool arguments when `input` is to be supplied). */
export type Approve = Way<"approve", { wait: string; scope?: "run" }, "input">;
export type Deny = Way<"deny", { wait: string }, "reason">;
export type Signal = Way<"signal", { name: string }, "payload">;
/** Release the run's open hold of kind `hold` with `choice` (choice "result" supplies the step's outcome). */
export type Release = Way<"release", { hold: HoldKind; choice: ReleaseChoice }, "result">;

/**
 * A way out of where a run is, as data: the control call that takes it (its verb, the run, the
 * arguments the engine knows) and the arguments only a person can give (`supply`). Each skin
 * renders it in its own terms (the CLI as a `stead …` command, MCP as a tool call).
 */
export type WayOut = StartWorker | FollowEvents | PlainCall | Approve | Deny | Signal | Release;

/** Where a run stands and why (`stead why`, a run's `why`). */
export interface Explanation {
  runId: string;
  status: string;
  /** One paragraph: where the run is, why, and what happens next. */
  text: string;
  /** Each way forward, as the control call that takes it; a skin renders them. */
  waysOut: WayOut[];
}

/** One run in full (`GET /runs/:runId`). */
export interface RunDetail {
  run: RunInfo;
  journal: StepView[];
  waits: WaitView[];
  holds: HoldView[];
  why: Explanation;
}

/** A run's detail without its journal (`?journal=false`): its length instead. */
export interface RunDetailWithoutJournal extends Omit<RunDetail, "journal"> {
  journalLength: number;
}

/** A page of a run's journal in journal order: `steps` from `offset`, of `total` entries. */
export interface JournalPage {
  steps: StepView[];
  total: number;
  offset: number;
}

/** An open wait and the run that waits. */
export interface OpenWaitView extends WaitView {
  runId: string;
  definition: string;
  sessionId: string | null;
  runStatus: RunStatus;
}

/** Open waits, newest first. */
export interface OpenWaits {
  waits: OpenWaitView[];
  /** True when more runs could hold open waits than the bound looked at: older ones may be missing. */
  truncated: boolean;
}

/** Runs by status, open waits and holds by kind; a status or kind with none is absent. */
export interface Tally {
  runs: Partial<Record<RunStatus, number>>;
  openWaits: Partial<Record<WaitKind, number>>;
  openHolds: Partial<Record<HoldKind, number>>;
}

export interface EventPage {
  events: EventView[];
}

export interface HoldList {
  holds: HoldView[];
}

/** Where the store's event stream ends now (`GET /events/position`): `after` for only what comes next. */
export interface EventPosition {
  position: string;
}

/** How a turn ended, as people read it: a failure with STEAD_TURN_INTERRUPTED is "interrupted". */
export type TurnOutcome = "completed" | "failed" | "interrupted" | "cancelled";

export interface SessionView {
  id: string;
  definition: string;
  turns: number;
  /** Turns not yet ended (the one running or waiting, and those queued behind it). */
  open: number;
  current: { runId: string; turn: number; status: string } | null;
  last: { runId: string; turn: number; outcome: TurnOutcome; error: string | null } | null;
  createdAt: string;
  updatedAt: string;
  /**
   * In a listing only: its last turn's sealed error failed to open (the message names the run's
   * row); `last.error` is then null, unread. Reading the session's turns refuses with this error.
   */
  damaged?: RunDamage;
}

/** A turn of a session: its run, its number, and how it ended (null while it has not). */
export type TurnView = RunInfo & { turn: number; outcome: TurnOutcome | null };

export interface SessionList {
  sessions: SessionView[];
}

/** A session and its turns in order (`GET /sessions/:sessionId`). */
export interface SessionDetail {
  session: SessionView;
  turns: TurnView[];
}

/**
 * - result / error: the tool's value, or the error the model was told.
 * - denied: a person denied the call; the model was told who and why.
 * - interrupted: "interrupted: outcome unknown" (a skipped ambiguous call, or a turn that ended
 *   before the call had a result: what later turns' model sees).
 * - running: its step is under way; outcome-unknown: its effect was dispatched and the process
 *   was lost (the run is held or about to be resumed); retry: a person chose to run it again.
 * - waiting-approval: parked until a person decides.
 * - failed: the tool's error ended the turn.
 * - answered-without-running: no step was run (an unknown tool, or arguments that are not valid
 *   JSON or fail the schema): the loop answered the model with an error it did not journal.
 * - not-run: not reached yet.
 */
export type ToolCallStatus =
  | "result"
  | "error"
  | "denied"
  | "interrupted"
  | "running"
  | "outcome-unknown"
  | "retry"
  | "waiting-approval"
  | "failed"
  | "answered-without-running"
  | "not-run";

export type ApprovalView =
  | { step: string; status: "waiting" }
  | { step: string; status: "approved" | "denied"; by: string | null; reason: string | null; scope: "once" | "run"; editedArgs?: unknown };

export interface ToolCallEntry {
  type: "tool-call";
  toolCallId: string;
  tool: string;
  /** The arguments the model sent: parsed JSON, or the text itself when it is not JSON. */
  args: unknown;
  /** The call's journal step (`tool:<key>`), whether or not it was written. */
  step: string;
  approval: ApprovalView | null;
  status: ToolCallStatus;
  /** The tool's value (status "result"). */
  result?: unknown;
  /** What the model was told, or the error that ended the turn. */
  message?: string;
}

export type TranscriptEntry =
  | { type: "user"; text: string }
  | { type: "model"; step: string; model: string; text: string; reasoning: string; finishReason: string; usage: { inputTokens: number; outputTokens: number } }
  /** A model call without a response: under way, cut off (it is made again), to be retried, or failed (it ended the turn). */
  | { type: "model-call"; step: string; status: "in-flight" | "cut-off" | "retry" | "failed"; attempt: number; message?: string }
  | { type: "quota"; step: string; model: string; resetAt: number; message: string; parked: boolean }
  | ToolCallEntry;

export interface TurnTranscript {
  turn: number;
  runId: string;
  status: RunStatus;
  /** How the turn ended; null while it has not. */
  outcome: TurnOutcome | null;
  /** Not started, behind an earlier turn that has not ended. */
  queued: boolean;
  error: { code: string | null; message: string } | null;
  entries: TranscriptEntry[];
}

export interface SessionTranscript {
  session: string;
  /** The definition of its latest turn. */
  definition: string;
  turns: TurnTranscript[];
}

/** A live worker serving a definition. */
export interface ServingWorker {
  workerId: string;
  host: string;
  pid: number;
  fingerprint: string;
  /** When it announced the definition (its start, or its last change of identity). */
  since: number;
  lastSeenAt: number;
}

/** One fingerprint of a definition some worker announced. */
export interface DefinitionVersion {
  fingerprint: string;
  kind: string;
  module: string | null;
  /** Its input's JSON Schema; null when it declares none (or the stored text is not JSON). */
  inputSchema: Record<string, unknown> | null;
  firstAnnouncedAt: number;
  lastSeenAt: number;
  /** The live workers serving this fingerprint. */
  workers: ServingWorker[];
}

export interface DefinitionView {
  name: string;
  kind: string;
  /** Whether any live worker serves it now. A run started while none does waits for one. */
  served: boolean;
  /** The live workers serving it, under any fingerprint, the longest serving first. */
  workers: ServingWorker[];
  /** When the longest-serving live worker announced it; null when none serves it. */
  since: number | null;
  /** The fingerprints live workers serve, the most recently seen first; when none does, the last one announced. */
  fingerprints: string[];
  /** The input schema of the first of `fingerprints` (a start by name is checked against each of theirs). */
  inputSchema: Record<string, unknown> | null;
  /** The module of the first of `fingerprints`, as a path on the machine of the worker that announced it. */
  module: string | null;
  firstAnnouncedAt: number;
  lastSeenAt: number;
  /** Every fingerprint on record, the most recently seen first. */
  versions: DefinitionVersion[];
}

export interface WorkerView {
  workerId: string;
  host: string;
  pid: number;
  /** What it serves: each definition's name and the fingerprint it announced, by name. */
  definitions: { name: string; fingerprint: string }[];
  /** Its earliest live announcement: when it started, unless it re-announced since. */
  since: number;
  /** Its latest refresh. */
  lastSeenAt: number;
  /** The runs it holds a lease on now, and until when (the runs table's lease owner and expiry). */
  leases: { runId: string; expiresAt: number | null }[];
}

export interface DefinitionList {
  definitions: DefinitionView[];
}

export interface WorkerList {
  workers: WorkerView[];
}

/** A control command's result: `already` is true when the same command (or key) was recorded before, and the result is the first one's. */
export type Replayed<T extends object = object> = T & { already: boolean };

export interface DecisionResult {
  runId: string;
  wait: string;
  approved: boolean;
  /** Who made the decision that stands (the first one, when `already`). */
  by: string | null;
  at: number;
}

export interface SignalResult {
  runId: string;
  wait: string;
  by: string | null;
  at: number;
}

export interface PauseResult {
  runId: string;
  /** "paused": parked now; "pause-requested": it parks after its current step. */
  state: "paused" | "pause-requested";
}

export interface ResumeResult {
  runId: string;
  /** Where the run was resumed from ("held": a definition_changed hold released by accepting the change). */
  from: "paused" | "pause-requested" | "cancelled" | "held";
  /** Every run made runnable again: the run, and for a cancelled one the children cancelled with it. */
  resumed: string[];
}

export interface RetryResult {
  runId: string;
  /** The failed step given a new attempt; null when the run failed outside any step (it is replayed). */
  stepId: string | null;
  attempt: number | null;
}

export interface CancelResult {
  runId: string;
  /** Every run this cancellation ended: the run and its unfinished children (empty when `already`). */
  cancelled: string[];
  by: string | null;
  at: number;
}

export interface ForkResult {
  /** The new run. */
  id: string;
  /** Journal entries it reuses from the source. */
  reused: number;
}

export interface StartByNameResult {
  id: string;
  /** Whether a live worker serves the definition now; false: the run waits until one does. */
  served: boolean;
  /** How many live workers serve it now. */
  workers: number;
}

/** `POST /runs`'s answer: the start, the definition's name, and a note when no live worker serves it. */
export type StartReply = Replayed<StartByNameResult> & { definition: string; note?: string };

/** A message queued as a session's next turn. */
export interface SendResult {
  /** The turn's run. */
  runId: string;
  /** The turn's number in its session. */
  turn: number;
}

/**
 * Who the caller is (`GET /auth/me`): a token's name and role, and every action that role may
 * take. An anonymous reader (no token, on a loopback server that serves reads) has null name and
 * role and the read actions only. The server refuses an action not listed whatever a page shows.
 */
export interface Me {
  name: string | null;
  role: Role | null;
  actions: string[];
}

export type NoteKind = "too-large" | "unsupported" | "gap" | "secret";

/** A snapshot of a run's workspace, at a journal position. */
export interface SnapshotView {
  id: number;
  runId: string;
  /** Journal position: the step's (`step`, `settle`), -1 for `start`. */
  seq: number;
  /** The step at `seq`; null for `start`. */
  stepId: string | null;
  source: "start" | "step" | "settle";
  /** Hash of the root tree object (or its keyed address in an encrypted store). */
  root: string;
  files: number;
  bytes: number;
  /** Files added, changed or removed since the previous snapshot of the run. */
  filesChanged: number;
  /** Compressed bytes of the blobs this capture added to the store. */
  newBytes: number;
  /** Files skipped (too large, unsupported, a secret) and gaps (could not read); `more`: those beyond the cap, by kind. */
  notes: { notes: { path: string; kind: NoteKind; detail: string }[]; more?: Partial<Record<NoteKind, number>> };
  checkpoint: unknown;
  createdAt: number;
}

/** `GET /runs/:runId/snapshots`: the run's workspace path and its snapshots, oldest first. */
export interface SnapshotList {
  runId: string;
  /** The directory the run works in, as given when it started; null without one. */
  workspace: string | null;
  snapshots: SnapshotView[];
}

export interface SnapshotFile {
  /** Relative to the workspace root, "/"-separated. */
  path: string;
  kind: "file" | "link";
  /** File mode bits; null for a link. */
  mode: number | null;
  /** Uncompressed size in bytes; null for a link. */
  size: number | null;
  /** SHA-256 of the content (hex); null for a link. */
  hash: string | null;
  /** A link's target (recorded, never followed); null for a file. */
  target: string | null;
  /** `utf8` when the bytes are valid UTF-8, else `base64`; null when the content is not given. */
  encoding: "utf8" | "base64" | null;
  content: string | null;
}

/** `GET /runs/:runId/snapshots/:step/tree`: the snapshot's files and links, without their contents. */
export interface SnapshotTree {
  runId: string;
  snapshot: SnapshotView;
  /** Files and links, in path order. */
  files: SnapshotFile[];
  /** Files listed without their content because it would pass the byte budget. */
  omitted: number;
}

/** `GET /runs/:runId/diff`: paths added, changed and removed between two steps' snapshots. */
export interface TreeDiff {
  added: string[];
  changed: string[];
  removed: string[];
}

/** `POST /runs`: a start by the definition's name. */
export interface StartBody {
  definition: string;
  /** Any JSON (default null), checked against the definition's announced input schema. */
  input?: unknown;
  /** The run's id (default a fresh one). */
  id?: string;
}

export interface DecisionBody {
  reason?: string | null;
  /** Tool approvals: the edited arguments, validated against the tool's recorded input schema. */
  input?: unknown;
  scope?: "once" | "run";
}

export interface DenialBody {
  reason?: string | null;
}

export interface SignalBody {
  /** Any JSON; absent is null. */
  payload: unknown;
}

export interface ReleaseBody {
  /** The hold's id or kind; absent: the run's one open hold. */
  hold?: string;
  choice: ReleaseChoice;
  /** With choice "result": the step's outcome. */
  result?: unknown;
}

export interface ResumeBody {
  /** Run it under a changed definition. */
  acceptChange?: boolean;
}

export interface CancelBody {
  reason?: string;
}

export interface ForkBody {
  /** The last step reused (default: the last completed one). */
  at?: string;
  /** The new run's id. */
  id?: string;
}

export interface MessageBody {
  text: string;
}

export type NoBody = Record<string, never>;

/**
 * Each JSON route of the API by `METHOD /path` (under /api/v1): its request body, when it takes
 * one, and its response. A route not here answers a stream, bytes, or nothing of this API's own
 * (the streams, a file, a tarball, sign-in).
 */
export interface ApiRoutes {
  "GET /runs": { response: RunList };
  "GET /runs/:runId": { response: RunDetail | RunDetailWithoutJournal };
  "GET /runs/:runId/journal": { response: JournalPage };
  "GET /runs/:runId/events": { response: EventPage };
  "GET /waits": { response: OpenWaits };
  "GET /tally": { response: Tally };
  "GET /holds": { response: HoldList };
  "GET /sessions": { response: SessionList };
  "GET /sessions/:sessionId": { response: SessionDetail };
  "GET /sessions/:sessionId/transcript": { response: SessionTranscript };
  "POST /sessions/:sessionId/messages": { body: MessageBody; response: Replayed<SendResult> };
  "GET /definitions": { response: DefinitionList };
  "GET /workers": { response: WorkerList };
  "POST /runs": { body: StartBody; response: StartReply };
  "POST /runs/:runId/waits/:wait/approve": { body: DecisionBody; response: Replayed<DecisionResult> };
  "POST /runs/:runId/waits/:wait/deny": { body: DenialBody; response: Replayed<DecisionResult> };
  "POST /runs/:runId/waits/:wait/signal": { body: SignalBody; response: Replayed<SignalResult> };
  "POST /runs/:runId/release": { body: ReleaseBody; response: Replayed<HoldView> };
  "POST /runs/:runId/pause": { body: NoBody; response: Replayed<PauseResult> };
  "POST /runs/:runId/resume": { body: ResumeBody; response: Replayed<ResumeResult> };
  "POST /runs/:runId/retry": { body: NoBody; response: Replayed<RetryResult> };
  "POST /runs/:runId/cancel": { body: CancelBody; response: Replayed<CancelResult> };
  "POST /runs/:runId/fork": { body: ForkBody; response: Replayed<ForkResult> };
  "GET /events/position": { response: EventPosition };
  "GET /runs/:runId/snapshots": { response: SnapshotList };
  "GET /runs/:runId/snapshots/:step/tree": { response: SnapshotTree };
  "GET /runs/:runId/diff": { response: TreeDiff };
  "GET /auth/me": { response: Me };
}

export type ApiRoute = keyof ApiRoutes;
/** What `route` answers. */
export type ApiResponse<R extends ApiRoute> = ApiRoutes[R]["response"];
/** What `route` takes as its JSON body (never for a GET). */
export type ApiBody<R extends ApiRoute> = ApiRoutes[R] extends { body: infer B } ? B : never;
