import type { Writable } from "node:stream";
import { setTimeout as delay } from "node:timers/promises";
import { SteadError } from "../errors.js";
import { openStore } from "../store/index.js";
import { checkedStore } from "../store/capabilities.js";
import { redactingStore } from "../store/redacting-store.js";
import { controlStore, type ControlStore } from "./control-store.js";
import { encryptingStore, type EncryptingStore } from "../store/encryption/encrypting-store.js";
import { defaultKeyDir, KeyChain, keyFileProvider, keyFromEnv, type KeyProvider } from "../store/encryption/key-providers.js";
import { Redactor, type RedactionOptions } from "../redaction/redactor.js";
import { childRuns } from "../store/run-sets.js";
import type { EraseReport, ListedRun, RunStatus, Store, StoreInfo, StoreTally, WaitKind } from "../store/types.js";
import { openWaits, type OpenWaits } from "../engine/open-waits.js";
import { resolveOutputRefs } from "../engine/output-refs.js";
import { TERMINAL_STATUSES } from "../store/types.js";
import { SCHEMA_VERSION } from "../store/schema/tables.js";
import { ownerIsDead } from "../worker/owner.js";
import { Worker, type WorkerOptions } from "../worker/worker.js";
import type { StorageReport } from "../worker/storage-guard.js";
import type * as verbs from "../engine/control/index.js";
import { requireRun } from "../engine/control/common.js";
import { control } from "../engine/control/lazy.js";
import { transcriptModule, whyModule } from "./lazy-reads.js";
import * as listing from "../engine/run-listing.js";
import type { AnyDefinition, WorkflowDefinition } from "../engine/definition.js";
import { assertDistinctNames, isDefinition } from "../engine/definition.js";
import { checkChosenRunId, idExcerpt, newRunId } from "../engine/ids.js";
import { checkedInput } from "../engine/input-schema.js";
import { listDefinitions, type DefinitionView } from "../engine/served-definitions.js";
import { listWorkers, type WorkerView } from "../engine/serving-workers.js";
import { checkKey, DEFAULT_IDEMPOTENCY_TTL_MS, onceByKey, type Replayable } from "../engine/idempotency.js";
import { DEFAULT_PAYLOAD_LIMIT, encodePayload } from "../engine/payload.js";
import {
  eventView,
  holdView,
  runView,
  stepView,
  waitView,
  type EventStreamPage,
  type EventView,
  type HoldView,
  type RunInfo,
  type StepView,
  type WaitView,
} from "../engine/views.js";
import type { ControlOptions } from "../engine/control-options.js";
import { NO_DECISION_FIELDS, type DecisionRules } from "../engine/control/decision-rules.js";
import type { Explanation } from "../engine/why.js";
import { Session, sessionView, type SessionView } from "../engine/sessions.js";
import { checkWorkspace } from "../workspace/workspace-path.js";
import type { GcOptions, GcResult, TreeDiff } from "../workspace/index.js";
import { gcWorkspaces } from "../workspace/lazy.js";
import { diffRunSnapshots, readRunSnapshot, restoreRunSnapshot, runSnapshotEntries, runSnapshotFile, runSnapshots, type RestoreOptions, type RunSnapshotEntries, type RunSnapshotFile, type Restored, type RunSnapshots, type SnapshotFiles, type SnapshotFilesOptions } from "../engine/run-snapshots.js";
import { sendToSession, turnViews, type TurnView } from "../engine/session-turns.js";
import { sessionTurns } from "../store/run-sets.js";
import type { SessionTranscript } from "../agent/session-transcript.js";
import type { DumpInput, ExportOptions, ExportSummary, ImportOptions, ImportSummary, VerifiedDump } from "../store/transfer/index.js";
import { exportStore, importStore } from "../store/transfer/lazy.js";
import { Tokens } from "../engine/access/tokens.js";
import { deleteFinishedRuns, type RunRetentionOptions, type RunRetentionSummary } from "../engine/retention.js";
import { keysStatus, rotateKeys, type KeyRotation, type KeysStatus } from "./keys.js";
import type { BackupSummary, CheckedBackup, RestoreSummary } from "./backup.js";

export type { ControlOptions };

/** A journal page (`journalPage`): its default and largest size. */
export const JOURNAL_PAGE_DEFAULT = 200;
export const JOURNAL_PAGE_MAX = 1000;
/** Events per read of a follow's stream. */
const FOLLOW_PAGE = 5000;

/** The longest wait between two tries to reach a store that cannot be reached. */
const RECONNECT_MAX_MS = 10_000;

/** Worker settings an instance gives every worker it makes (a worker's own options win). */
export type WorkerDefaults = Pick<WorkerOptions, "workspace" | "checkpointMetadata" | "redact" | "restoreHooks" | "restoreHookTimeoutMs" | "secretSource">;

export interface SteadOptions extends WorkerDefaults {
  /** A Store, or a location: an SQLite file path or a postgres:// URL. Default: STEAD_DATABASE_URL, STEAD_STORE, or `.stead/stead.db`. */
  store?: Store | string;
  /** Create the store when missing. Default true (the CLI's read and answer verbs pass false). */
  create?: boolean;
  /**
   * Open the store (given as a location) for reading only, as the CLI's read verbs do: no
   * migration, a store whose schema is older is refused naming `stead migrate`, and SQLite opens a
   * read-only connection. Implies `create: false`; writes through this instance fail.
   */
  readonly?: boolean;
  /** Ceiling for every stored payload, in bytes. Default 1 MiB. Over it, the write fails closed. */
  payloadLimitBytes?: number;
  /** How long a control command's idempotency key is kept (at least). Default 24 hours. */
  idempotencyTtlMs?: number;
  /**
   * Secrets that never reach the store, the event log, the CLI or the API: configured values,
   * values of named environment variables, and well-known shapes (provider API keys, bearer
   * tokens, private keys; on by default). Each is replaced by `[redacted:<rule>]` in every payload
   * before it is stored, and the fields and rules are recorded in a `payload.redacted` event.
   */
  redaction?: RedactionOptions;
  /**
   * Encryption at rest (AES-256-GCM, envelope): every payload and workspace blob is sealed by a
   * data key the store keeps wrapped by `key`. A new store is encrypted when a key is given; a
   * store encrypted already never opens without its key (STEAD_KEY_MISSING). Default `key`:
   * STEAD_ENCRYPTION_KEY, else STEAD_ENCRYPTION_KEY_FILE; an encrypted store also finds its key
   * file in `keyDir` (default STEAD_KEY_DIR, else ~/.config/stead/keys) by the key's id.
   */
  encryption?: EncryptionOptions;
}

/** How long a manual gc waits for readers of the store before it reports its erase unfinished. */
export const DEFAULT_ERASE_WAIT_MS = 5_000;

export interface EraseOptions {
  /**
   * SQLite: how long to keep trying the checkpoint that erases the deleted rows' bytes from the
   * store file and its -wal while another connection reads from before the deletes. Default 5 s.
   * One still unfinished then is recorded in the store: a worker's sweeper finishes it once the
   * reader is done, and so does the next gc.
   */
  eraseWaitMs?: number;
}

export interface Erased {
  /** SQLite only: whether the deleted rows' bytes are gone from the store's files (absent on Postgres, whose files keep them until its VACUUM). */
  erase?: EraseReport;
}

export interface EncryptionOptions {
  /** A key provider (a KMS), or the path of a key file. */
  key?: KeyProvider | string;
  keyDir?: string;
  /**
   * Use a key file that its group or other users may read, or that lies in a directory they may
   * write. Default: STEAD_ALLOW_READABLE_KEY_FILE=1, else false (such a file is refused, STEAD_KEY_EXPOSED).
   */
  allowReadableKeyFile?: boolean;
}

let warnedNewStead = false;

/** `new Stead()` is kept for one release: it lacks the agent's tool-approval rules that createStead gives. */
function warnNewStead(): void {
  if (warnedNewStead) return;
  warnedNewStead = true;
  process.emitWarning("new Stead() is deprecated and will be removed: use createStead(options), which gives the instance the agent layer's rules for tool approvals (without them a decision's edited arguments are refused)", {
    type: "DeprecationWarning",
    code: "STEAD_DEP_NEW_STEAD",
  });
}

/** The keys an instance may open its store with: the one given, else the environment's; and the key directory. */
export function keyChainFor(options: EncryptionOptions | undefined): KeyChain {
  const fileOptions = options?.allowReadableKeyFile === undefined ? {} : { allowReadable: options.allowReadableKeyFile };
  const given = typeof options?.key === "string" ? keyFileProvider(options.key, fileOptions) : (options?.key ?? keyFromEnv(process.env, fileOptions));
  return new KeyChain(given, options?.keyDir ?? defaultKeyDir(), fileOptions);
}

export interface StartOptions extends ControlOptions {
  /** Run id; default a fresh one. */
  id?: string;
  /**
   * A directory the run works in: snapshotted after every effect and tool step, and brought back
   * to its last completed step when the run resumes, on this machine or another.
   */
  workspace?: string;
}

export interface FollowOptions extends Omit<WorkerOptions, "definitions" | "runIds"> {
  /** Extra definitions (e.g. of child runs) the in-process worker may execute. */
  definitions?: readonly AnyDefinition[];
  /** Keep executing through timers due within this many ms. Default 60 000. */
  followTimersMs?: number;
  /** Called for every new event of the run's tree, once each, in commit order. */
  onEvent?: (e: EventView) => void | Promise<void>;
  /** Report only events after this event stream position (a `position` of `eventsAfter`). Default: every event. */
  eventsFrom?: string;
  /**
   * Stops following when aborted: the in-process worker stops gracefully (steps in flight may
   * commit, then each run is handed back as pending for any worker) and follow returns the run.
   */
  signal?: AbortSignal;
  /** Called with errors of the in-process worker (it keeps polling after them). */
  onError?: (e: unknown) => void;
  /** Called when the in-process worker finds the store full, still full, or writable again. */
  onStorage?: (report: StorageReport) => void;
}

/** A Stead instance: one store, its runs, and workers. No process-wide state: several may coexist. */
export class Stead {
  readonly store: Store;
  /** The store as control commands write it: on SQLite their one-unit commits share transactions (control-store.ts). */
  private readonly controlWrites: ControlStore;
  private get control(): Store {
    return this.controlWrites.store;
  }
  readonly payloadLimit: number;
  readonly idempotencyTtlMs: number;
  /** What is redacted from everything this instance stores (see `redaction`). */
  readonly redactor: Redactor;
  /** Access tokens: create (the secret shown once), list, revoke, verify. */
  readonly tokens: Tokens;
  /** The keys this instance may open an encrypted store with (see `encryption`). */
  readonly keyChain: KeyChain;
  private readyPromise: Promise<void> | undefined;
  private readonly create: boolean;
  private readonly workers = new Set<Worker>();
  private readonly workerDefaults: WorkerDefaults & Pick<WorkerOptions, "redactor">;

  /** What reads decisions' fields beyond by and reason (createStead gives the agent layer's tool approvals). */
  private readonly decisions: DecisionRules;

  /** Use createStead(): it gives the instance the agent layer's rules for tool approvals; without them a decision takes no fields. */
  constructor(options: SteadOptions = {}, decisions?: DecisionRules) {
    if (decisions === undefined) warnNewStead();
    this.decisions = decisions ?? NO_DECISION_FIELDS;
    const { workspace, checkpointMetadata, redact, restoreHooks, restoreHookTimeoutMs, secretSource } = options;
    this.redactor = Redactor.from(options.redaction);
    this.workerDefaults = Object.fromEntries(
      Object.entries({ workspace, checkpointMetadata, redact, restoreHooks, restoreHookTimeoutMs, secretSource, redactor: this.redactor }).filter(([, v]) => v !== undefined),
    );
    const readonly = options.readonly ?? false;
    this.create = !readonly && (options.create ?? true);
    // The key is found (or refused) before the store is opened: a refusal creates no store.
    this.keyChain = keyChainFor(options.encryption);
    const base = typeof options.store === "object" ? checkedStore(options.store) : openStore(options.store, { create: this.create, readonly });
    // Redacted first, then sealed: a secret is gone before anything is encrypted.
    this.store = redactingStore(encryptingStore(base, this.keyChain, { setUp: this.create }), this.redactor);
    this.controlWrites = controlStore(this.store);
    this.payloadLimit = options.payloadLimitBytes ?? DEFAULT_PAYLOAD_LIMIT;
    this.idempotencyTtlMs = options.idempotencyTtlMs ?? DEFAULT_IDEMPOTENCY_TTL_MS;
    this.tokens = new Tokens(this);
  }

  /** A run as the API returns it: payloads parsed, output references resolved (see output-refs.ts). */
  async view(row: ListedRun): Promise<RunInfo> {
    const v = runView(row);
    return row.outputRefs === "[]" || v.output === undefined ? v : { ...v, output: await resolveOutputRefs(this.store, row.id, v.output, row.outputRefs) };
  }

  /** The key option of a control call, checked; undefined without a key. */
  keyOption(options: { idempotencyKey?: string | undefined } | undefined): verbs.KeyOption | undefined {
    return options?.idempotencyKey === undefined ? undefined : { key: checkKey(options.idempotencyKey), ttlMs: this.idempotencyTtlMs };
  }

  /** A control verb's call: this instance's control store, limit and decision rules, with the caller's `by` and idempotency key (checked). */
  private call(options: ControlOptions & { by?: string | null | undefined }): verbs.ControlCall<ControlStore["store"]> {
    return { store: this.control, by: options.by ?? null, key: this.keyOption(options), limit: this.payloadLimit, rules: this.decisions };
  }

  /** Migrates the store (add-only, one transaction per migration); a read-only store is only checked. Called by every method. */
  ready(): Promise<void> {
    this.readyPromise ??= (this.create ? this.store.migrate() : this.store.check().then(() => this.store.migrate())).catch((e: unknown) => {
      // A store that was unreachable may be reached by the next call.
      this.readyPromise = undefined;
      throw e;
    });
    return this.readyPromise;
  }

  /**
   * `ready()`, tried again with bounded backoff while the store cannot be reached (a database
   * starting, restarting or not up yet); any other refusal fails at once. `timeoutMs`: give up
   * after this long (default: never); `onRetry` hears each failed try and the wait before the next.
   */
  async readyWhenReachable(options: { timeoutMs?: number; onRetry?: (e: SteadError, attempt: number, delayMs: number) => void; signal?: AbortSignal } = {}): Promise<void> {
    const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.ready();
      } catch (e) {
        if (!(e instanceof SteadError) || e.code !== "STEAD_STORE_UNREACHABLE" || options.signal?.aborted) throw e;
        const delayMs = Math.min(RECONNECT_MAX_MS, 250 * 2 ** (attempt - 1), Math.max(0, deadline - Date.now()));
        if (delayMs <= 0) throw e;
        options.onRetry?.(e, attempt, delayMs);
        await delay(delayMs, undefined, options.signal ? { signal: options.signal } : {}).catch(() => undefined);
      }
    }
  }

  /** Records a new run of `definition`; any worker that has the definition executes it. */
  async start<I, O>(definition: WorkflowDefinition<I, O>, input: I, options: StartOptions = {}): Promise<Replayable<{ id: string }>> {
    if (!isDefinition(definition)) {
      throw new SteadError("STEAD_INVALID_DEFINITION", "start() needs a definition made with workflow()", {
        fix: 'export const w = workflow("name", async (ctx, input) => ...); then stead.start(w, input)',
      });
    }
    if (options.id !== undefined) checkChosenRunId(options.id);
    const encoded = encodePayload(input, `the input of ${definition.name}`, this.payloadLimit) ?? "null";
    // Only a declared input is awaited: without one, a start takes the turns it always took.
    if (definition.input) await checkedInput(definition, input, { fix: `pass an input that matches the input schema of ${definition.name}` });
    const workspace = options.workspace === undefined ? null : checkWorkspace(options.workspace);
    const key = this.keyOption(options);
    await this.ready();
    const by = options.by ?? null;
    const args = { input: JSON.parse(encoded) as unknown, id: options.id ?? null, workspace };
    const call = key ? { verb: "start" as const, scope: definition.name, key: key.key, args, by, ttlMs: key.ttlMs } : undefined;
    return onceByKey<{ id: string }>(this.store, call, async (keyWrite) => {
      const id = options.id ?? newRunId();
      const fingerprint = definition.fingerprint();
      await this.store.createRun(
        { id, definition: definition.name, module: definition.module, fingerprint, input: encoded, createdAt: Date.now(), workspace },
        [{ type: "run.created", data: { definition: definition.name, fingerprint, by } }],
        keyWrite?.({ id }),
      );
      return { id, already: false };
    });
  }

  /**
   * Records a new run of the definition named `name`, with no user code loaded: the input is
   * checked against the JSON Schema its workers announced. A name no worker ever announced is
   * refused; one no live worker serves now is started, and waits (`served: false`).
   */
  async startByName(name: string, input: unknown, options: StartOptions = {}): Promise<Replayable<verbs.StartByNameResult>> {
    const key = this.keyOption(options);
    return (await control()).startByName(this.store, name, input, { id: options.id, workspace: options.workspace, by: options.by, key, payloadLimit: this.payloadLimit, ready: () => this.ready() });
  }

  /** What workers serve, and what they served before, read from the store alone (no user code is loaded). */
  async definitions(filter: { name?: string } = {}): Promise<DefinitionView[]> {
    await this.ready();
    return listDefinitions(this.store, filter);
  }

  /** The workers alive now by their announcements (id, host, pid, what each serves, since when), from the store alone. */
  async liveWorkers(): Promise<WorkerView[]> {
    await this.ready();
    return listWorkers(this.store);
  }

  /**
   * Starts a run and executes it in this process until it ends or parks (a timer due within
   * `followTimersMs` is waited for). Returns the run as it then is.
   */
  async run<I, O>(definition: WorkflowDefinition<I, O>, input: I, options: FollowOptions & StartOptions = {}): Promise<RunInfo> {
    assertDistinctNames([definition, ...(options.definitions ?? [])]);
    const { id } = await this.start(definition, input, {
      ...(options.id !== undefined ? { id: options.id } : {}),
      ...(options.workspace !== undefined ? { workspace: options.workspace } : {}),
      ...(options.idempotencyKey !== undefined ? { idempotencyKey: options.idempotencyKey } : {}),
      ...(options.by !== undefined ? { by: options.by } : {}),
    });
    return this.follow(id, [definition, ...(options.definitions ?? [])], options);
  }

  /** Executes an existing run (and its children) in this process until it ends or parks. */
  async follow(runId: string, definitions: readonly AnyDefinition[], options: FollowOptions = {}): Promise<RunInfo> {
    assertDistinctNames(definitions);
    await this.ready();
    const root = await requireRun(this.store, runId);
    if (!definitions.some((d) => d.name === root.definition)) {
      throw new SteadError("STEAD_DEFINITION_NOT_FOUND", `run ${runId} is a run of "${root.definition}", which none of the given definitions is`, {
        runId,
        fix: `load the module that exports workflow "${root.definition}"${root.module ? ` (${root.module})` : ""}`,
      });
    }
    let tree: string[] = [runId];
    const worker = this.worker({ ...options, definitions, runIds: tree });
    // An EventEmitter "error" with no listener throws inside the worker's poll loop.
    worker.on("error", (e) => options.onError?.(e));
    worker.on("storage", (r) => options.onStorage?.(r));
    // The store vanished under the worker: following further would report nothing true.
    let fatal: { error: unknown } | undefined;
    const ended = new AbortController();
    worker.once("fatal", (e) => {
      fatal = { error: e };
      ended.abort();
    });
    const onAbort = () => ended.abort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const signal = ended.signal;
    const followTimers = options.followTimersMs ?? 60_000;
    let position = options.eventsFrom ?? null;
    const pollMs = options.pollMs ?? 100;
    // Runs known not to be in the tree: a run's parent never changes.
    const outside = new Set<string>();
    const flushEvents = async () => {
      if (!options.onEvent) return;
      for (;;) {
        // The whole store's stream, filtered here: a child created since the tree was read is
        // visible by now (its row committed before its first event), so reading the tree again
        // after the page finds it, and none of its events is lost to a stale filter.
        const page = await this.store.eventsAfter(position, { limit: FOLLOW_PAGE });
        if (page.events.some((e) => !tree.includes(e.runId) && !outside.has(e.runId))) {
          tree = await this.treeIds(runId);
          for (const e of page.events) if (!tree.includes(e.runId)) outside.add(e.runId);
        }
        for (const e of page.events) if (tree.includes(e.runId)) await options.onEvent(eventView(e));
        position = page.position;
        if (page.events.length < FOLLOW_PAGE) return;
      }
    };
    const aborted = () => options.signal?.aborted === true;
    worker.start();
    try {
      for (;;) {
        if (fatal) throw fatal.error;
        if (aborted()) {
          await worker.stop({ graceMs: options.graceMs ?? 30_000 });
          tree = await this.treeIds(runId);
          await flushEvents();
          return this.view(await requireRun(this.store, runId));
        }
        tree = await this.treeIds(runId);
        worker.setRunIds(tree);
        await flushEvents();
        const run = await requireRun(this.store, runId);
        if (await this.settled(run.id, run.status, followTimers, worker)) {
          tree = await this.treeIds(runId);
          await flushEvents();
          return this.view(run);
        }
        await delay(pollMs, undefined, { signal }).catch(() => undefined);
      }
    } finally {
      options.signal?.removeEventListener("abort", onAbort);
      await worker.stop({ graceMs: options.graceMs ?? 30_000 });
    }
  }

  private async settled(runId: string, status: RunStatus, followTimersMs: number, worker: Worker): Promise<boolean> {
    if (TERMINAL_STATUSES.includes(status) || status === "held" || status === "paused") return worker.inFlight === 0;
    if (status !== "waiting") return false;
    const open = (await this.store.waits(runId)).filter((w) => w.status === "open");
    const now = Date.now();
    const keepGoing = open.some((w) => w.kind === "child" || ((w.kind === "timer" || w.kind === "quota") && (w.wakeAt ?? 0) - now <= followTimersMs));
    return !keepGoing && worker.inFlight === 0;
  }

  private async treeIds(runId: string): Promise<string[]> {
    const ids = [runId];
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (id === undefined) continue;
      for (const c of await childRuns(this.store, id)) ids.push(c.id);
    }
    return ids;
  }

  /** A worker on this instance's store. Call `.start()` to begin claiming. */
  worker(options: WorkerOptions): Worker {
    const w = new Worker(this.store, { payloadLimitBytes: this.payloadLimit, ...this.workerDefaults, ...options });
    this.workers.add(w);
    const start = w.start.bind(w);
    w.start = () => {
      // A store not reachable yet (Postgres starting) is waited for, each try reported as an error.
      void this.readyWhenReachable({ onRetry: (e) => w.emit("error", e) }).then(start, (e: unknown) => w.emit("error", e));
      return w;
    };
    return w;
  }

  async get(runId: string): Promise<RunInfo> {
    await this.ready();
    return this.view(await requireRun(this.store, runId));
  }

  /** One page of runs and the cursor of the next (see engine/run-listing.ts). Reads no journal. */
  async list(query: listing.RunListQuery = {}): Promise<listing.RunListPage> {
    await this.ready();
    return listing.listRunPage(this.store, query, (r) => this.view(r));
  }

  /** How many runs match `filter` (the filters of `list`); counts every match, so its cost grows with them. */
  async count(filter: listing.RunListFilter = {}): Promise<number> {
    await this.ready();
    return this.store.countRuns(filter);
  }

  /** Runs by status and open waits and holds by kind: grouped counts, never a row per run (`/metrics` reads them). */
  async tally(): Promise<StoreTally> {
    await this.ready();
    return this.store.tally();
  }

  /** What a listing shows of each of these runs (a page's ids): last step, last event, open waits and holds. */
  async activity(runIds: readonly string[]): Promise<listing.RunActivityView[]> {
    await this.ready();
    return listing.runActivity(this.store, runIds);
  }

  async journal(runId: string): Promise<StepView[]> {
    await this.ready();
    await requireRun(this.store, runId);
    return (await this.store.journal(runId)).map(stepView);
  }

  /**
   * A page of a run's journal in journal order, and how many entries it has. Hazard: the store
   * reads the whole journal and the page is cut here, so a page costs the journal's size (the
   * `RunReads` port has no paged journal read yet); only the page leaves this process.
   */
  /**
   * A page of a run's journal in journal order. `step`: the page (of `limit` entries, at an
   * offset that is a multiple of it) that holds that step, so a link to one step finds its page;
   * it takes no `offset`. Hazard: the store reads the whole journal and the page is cut from it.
   */
  async journalPage(runId: string, page: { offset?: number; limit?: number; step?: string } = {}): Promise<{ steps: StepView[]; total: number; offset: number }> {
    const limit = page.limit ?? JOURNAL_PAGE_DEFAULT;
    if (page.step !== undefined && page.offset !== undefined) throw new SteadError("STEAD_BAD_OPTION", "give offset or step, not both", { fix: "pass step alone to get the page that holds it", field: "step" });
    if (page.offset !== undefined && (!Number.isSafeInteger(page.offset) || page.offset < 0)) throw new SteadError("STEAD_BAD_OPTION", "offset must be a whole number from 0", { fix: "pass the index of the page's first entry", field: "offset" });
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > JOURNAL_PAGE_MAX) throw new SteadError("STEAD_BAD_OPTION", `limit must be a whole number from 1 to ${JOURNAL_PAGE_MAX}`, { fix: `pass a page size from 1 to ${JOURNAL_PAGE_MAX}`, field: "limit" });
    await this.ready();
    await requireRun(this.store, runId);
    const all = await this.store.journal(runId);
    let offset = page.offset ?? 0;
    if (page.step !== undefined) {
      const at = all.findIndex((s) => s.stepId === page.step);
      if (at < 0) throw new SteadError("STEAD_STEP_NOT_FOUND", `run ${runId} has no step ${JSON.stringify(page.step.slice(0, 200))}`, { fix: "name a step of the run's journal", runId, stepId: page.step.slice(0, 200) });
      offset = at - (at % limit);
    }
    return { steps: all.slice(offset, offset + limit).map(stepView), total: all.length, offset };
  }

  /** Open waits across runs (an approvals inbox), newest first; see engine/open-waits.ts for the bound on runs looked at. */
  async openWaits(filter: { kind?: WaitKind; limit?: number } = {}): Promise<OpenWaits> {
    await this.ready();
    return openWaits(this.store, filter);
  }

  async waits(runId: string): Promise<WaitView[]> {
    await this.ready();
    await requireRun(this.store, runId);
    return (await this.store.waits(runId)).map(waitView);
  }

  /**
   * Holds, open ones unless `open` is false. Across runs it is a listing: a hold whose sealed
   * values fail to open is listed marked `damaged`, so one cannot hide the others. One run's
   * holds (`runId`) are a read of that run, and refuse such a hold as the run's other reads do.
   */
  async holds(filter: { runId?: string; open?: boolean } = {}): Promise<HoldView[]> {
    await this.ready();
    const rows = await this.store.holds({ ...(filter.runId ? { runId: filter.runId } : { markDamaged: true }), ...(filter.open === false ? {} : { status: "open" as const }) });
    return rows.map(holdView);
  }

  /**
   * Events by number. Hazard: on Postgres, paging by `afterSeq` across runs can skip an event whose
   * number was taken before a later one's but committed after it; follow with `eventsAfter`.
   */
  async events(filter: { runId?: string; afterSeq?: number; limit?: number } = {}): Promise<EventView[]> {
    await this.ready();
    if (filter.runId) await requireRun(this.store, filter.runId);
    return (await this.store.events(filter)).map(eventView);
  }

  /**
   * The event stream from `position` (absent or null: from the start), of one run (`runId`),
   * several (`runIds`) or the whole store: every event committed since, once each across reads,
   * in commit order, never held back by a transaction still open. Read again from the returned
   * position. A position this store did not give is refused with STEAD_BAD_POSITION.
   */
  async eventsAfter(position?: string | null, filter: { runId?: string; runIds?: readonly string[]; limit?: number } = {}): Promise<EventStreamPage> {
    await this.ready();
    if (filter.runId !== undefined) await requireRun(this.store, filter.runId);
    const page = await this.store.eventsAfter(position ?? null, filter);
    return { events: page.events.map(eventView), position: page.position, positions: page.positions };
  }

  /** Approves what a run waits for. The same decision again succeeds (`already`); another is refused naming the first. */
  async approve(runId: string, name: string, d: verbs.Decision & ControlOptions = {}): Promise<Replayable<verbs.DecisionResult>> {
    const call = this.call(d);
    await this.ready();
    return (await control()).decide(call, runId, name, true, d);
  }

  async deny(runId: string, name: string, d: verbs.Decision & ControlOptions = {}): Promise<Replayable<verbs.DecisionResult>> {
    const call = this.call(d);
    await this.ready();
    return (await control()).decide(call, runId, name, false, d);
  }

  /** Delivers a signal a run waits for; `options` may be just who sends it. The same payload again succeeds (`already`). */
  async signal(runId: string, name: string, payload: unknown, options: ControlOptions | string | null = null): Promise<Replayable<verbs.SignalResult>> {
    const o: ControlOptions = typeof options === "object" && options !== null ? options : { by: options };
    const call = this.call(o);
    await this.ready();
    return (await control()).signal(call, runId, name, payload);
  }

  async pause(runId: string, options: ControlOptions = {}): Promise<Replayable<verbs.PauseResult>> {
    const call = this.call(options);
    await this.ready();
    return (await control()).pause(call, runId);
  }

  /**
   * Resumes a paused run, or a cancelled one from its last completed step (with the children its
   * cancellation ended); with `acceptChange`, releases a `definition_changed` hold by accepting the new code.
   */
  async resume(runId: string, options: { acceptChange?: boolean } & ControlOptions = {}): Promise<Replayable<verbs.ResumeResult>> {
    const call = this.call(options);
    await this.ready();
    if (options.acceptChange) {
      const r = await (await control()).release(call, runId, "definition_changed", { choice: "accept-change", by: call.by });
      return { runId, from: "held", resumed: r.already ? [] : [runId], already: r.already };
    }
    return (await control()).resume(call, runId);
  }

  /** Gives a failed run's failed step a new attempt (after fixing its cause), with nothing before it run again. */
  async retry(runId: string, options: ControlOptions = {}): Promise<Replayable<verbs.RetryResult>> {
    const call = this.call(options);
    await this.ready();
    return (await control()).retry(call, runId);
  }

  async cancel(runId: string, options: { reason?: string } & ControlOptions = {}): Promise<Replayable<verbs.CancelResult>> {
    const call = this.call(options);
    await this.ready();
    return (await control()).cancel(call, runId, options.reason ?? null);
  }

  async release(runId: string, hold: string | undefined, options: verbs.ReleaseOptions & ControlOptions): Promise<Replayable<HoldView>> {
    const call = this.call(options);
    await this.ready();
    const r = await (await control()).release(call, runId, hold, options);
    return { ...holdView(r), already: r.already };
  }

  async fork(runId: string, options: { at?: string; id?: string } & ControlOptions = {}): Promise<Replayable<verbs.ForkResult>> {
    if (options.id !== undefined) checkChosenRunId(options.id);
    const call = this.call(options);
    await this.ready();
    return (await control()).fork(call, runId, options.at, options.id);
  }

  async why(runId: string): Promise<Explanation> {
    await this.ready();
    const run = await requireRun(this.store, runId);
    const [journal, waits, holds] = await Promise.all([this.store.journal(runId), this.store.waits(runId), this.store.holds({ runId })]);
    const gone = run.status === "running" && ownerIsDead({ host: run.ownerHost, pid: run.ownerPid, start: run.ownerStart });
    return (await whyModule()).explain(run, journal, waits, holds, Date.now(), gone);
  }

  /**
   * A session: a conversation with an agent whose inputs run as turns, one at a time, in order,
   * each continuing the history of the turns before it. `send` only queues: a worker runs it.
   */
  session<I, O>(definition: WorkflowDefinition<I, O>, id: string, options: { workspace?: string } = {}): Session<I> {
    return new Session(this, definition, id, options.workspace === undefined ? null : checkWorkspace(options.workspace));
  }

  /** Sessions with their queue and last turn, most recently active first; one whose last turn cannot be read is listed marked `damaged`. */
  async sessions(filter: { limit?: number; sessionId?: string } = {}): Promise<SessionView[]> {
    await this.ready();
    return (await this.store.listSessions(filter)).map(sessionView);
  }

  /** The run ids of a session's turns, oldest first; empty when there is no such session. */
  async sessionRunIds(sessionId: string): Promise<string[]> {
    await this.ready();
    return (await sessionTurns(this.store, sessionId)).map((r) => r.id);
  }

  /** A session's latest turn (null when there is no such session): the definition and module it recorded. */
  async lastTurn(sessionId: string): Promise<(RunInfo & { turn: number }) | null> {
    await this.ready();
    const last = (await sessionTurns(this.store, sessionId)).pop();
    return last ? { ...(await this.view(last)), turn: last.turn ?? 0 } : null;
  }

  /** A session's transcript, rebuilt from its turns' journals with no agent code loaded (STEAD_SESSION_NOT_FOUND for none). */
  async transcript(sessionId: string): Promise<SessionTranscript> {
    await this.ready();
    return (await transcriptModule()).readSessionTranscript(this.store, sessionId);
  }

  /** A session and its turns in order (runs with their turn number and how each ended); STEAD_SESSION_NOT_FOUND for none. */
  async sessionWithTurns(sessionId: string): Promise<{ session: SessionView; turns: TurnView[] }> {
    await this.ready();
    const [summary] = await this.store.listSessions({ sessionId, limit: 1 });
    if (!summary) throw new SteadError("STEAD_SESSION_NOT_FOUND", `no session ${idExcerpt(sessionId)}`, { session: sessionId, fix: "list sessions with `stead sessions`" });
    return { session: sessionView(summary), turns: await turnViews(this, sessionId) };
  }

  /**
   * Queues `input` as the next turn of a session that exists, under the agent its last turn
   * recorded, with no agent code loaded: what a skin that holds no definitions (the HTTP API,
   * MCP) sends. A session with no turn yet is STEAD_SESSION_NOT_FOUND (start it with `session()`).
   */
  async sendToSession(sessionId: string, input: unknown, options: ControlOptions = {}): Promise<Replayable<{ runId: string; turn: number }>> {
    return sendToSession(this, sessionId, input, options);
  }

  /** A run's workspace path and snapshots, oldest first. */
  async snapshots(runId: string): Promise<RunSnapshots> {
    await this.ready();
    return runSnapshots(this.store, runId);
  }

  /** Writes a snapshot of a run's workspace (default: its latest step's) into an empty or new directory on this machine. */
  async restore(runId: string, options: RestoreOptions = {}): Promise<Restored> {
    await this.ready();
    return restoreRunSnapshot(this.store, runId, options);
  }

  /**
   * A snapshot of a run's workspace (default: its latest step's) as its files and their contents
   * (UTF-8 text, else base64, within a byte budget), written nowhere: a restore for a caller on
   * another machine.
   */
  async snapshotFiles(runId: string, options: SnapshotFilesOptions = {}): Promise<SnapshotFiles> {
    await this.ready();
    return readRunSnapshot(this.store, runId, options);
  }

  /**
   * A snapshot of a run's workspace (default: its latest step's) entry by entry (directories,
   * files, links; relative paths), each file's content read only when `read` is called: for a
   * caller that streams it (a tarball).
   */
  async snapshotEntries(runId: string, choice: { step?: string; seq?: number } = {}): Promise<RunSnapshotEntries> {
    await this.ready();
    return runSnapshotEntries(this.store, runId, choice);
  }

  /** One file of a snapshot of a run's workspace, its bytes whole (STEAD_FILE_NOT_FOUND when the path is no file of it). */
  async snapshotFile(runId: string, path: string, choice: { step?: string; seq?: number } = {}): Promise<RunSnapshotFile> {
    await this.ready();
    return runSnapshotFile(this.store, runId, path, choice);
  }

  /** Files added, changed and removed between the workspace snapshots of two steps of a run. */
  async diff(runId: string, stepA: string, stepB: string): Promise<TreeDiff> {
    await this.ready();
    return diffRunSnapshots(this.store, runId, stepA, stepB);
  }

  /**
   * Deletes runs finished at least `finishedBefore` ago (journal, events, waits, holds, snapshots,
   * the run rows unless `keepSummary`), a whole run tree and a whole session at a time, then the
   * workspace blobs nothing refers to any more. A run not finished, or a tree or session with one,
   * is never touched. On SQLite, `erase` then says whether the deleted rows' bytes are gone from
   * the store's files, or which files still hold them and why (see {@link EraseOptions}).
   */
  async deleteFinishedRuns(options: RunRetentionOptions & EraseOptions): Promise<RunRetentionSummary & Erased> {
    await this.ready();
    const summary = await deleteFinishedRuns(this.store, options);
    return { ...summary, ...(await this.eraseFreed(options)) };
  }

  /** Deletes workspace blobs no snapshot refers to (with `keepSteps`, first prunes finished runs' older snapshots); `erase` as for deleteFinishedRuns. */
  async gc(options: GcOptions & EraseOptions = {}): Promise<GcResult & Erased> {
    await this.ready();
    const result = await gcWorkspaces(this.store, options);
    return { ...result, ...(await this.eraseFreed(options)) };
  }

  private async eraseFreed(options: EraseOptions): Promise<Erased> {
    if (!this.store.eraseFreed) return {};
    return { erase: await this.store.eraseFreed(options.eraseWaitMs ?? DEFAULT_ERASE_WAIT_MS) };
  }

  /**
   * Whether the store is encrypted; its keys, the key-encryption key wrapping each, and whether this
   * machine holds it. Answered where this machine lacks the key too (`held: false`): that is what
   * it reports. Any other refusal of the store (damaged, unreachable) is thrown.
   */
  async keysStatus(): Promise<KeysStatus> {
    let opens = true;
    try {
      await this.ready();
    } catch (e) {
      if (!(e instanceof SteadError) || (e.code !== "STEAD_KEY_MISSING" && e.code !== "STEAD_KEY_WRONG")) throw e;
      opens = false;
    }
    return keysStatus(this.store, this.keyChain, opens);
  }

  /**
   * Wraps every key of the store by `key` and seals new values by a new data key; no stored value
   * is rewritten. Refused on a plain store, and when this machine holds no key the store's keys are wrapped by.
   */
  async rotateKeys(key: KeyProvider): Promise<KeyRotation> {
    await this.ready();
    return rotateKeys(this.store, this.keyChain, key);
  }

  /** Where the store is, as people read it: a file path, or a URL without its password. */
  get location(): string {
    return this.store.location;
  }

  /** The store's location, dialect and schema version. */
  async storeInfo(): Promise<StoreInfo> {
    await this.ready();
    return this.store.check();
  }

  /**
   * The store as it answers now (reached anew, not remembered from the first call) with the
   * schema this code writes: what a server's /readyz reports. Refused: a store that cannot be
   * reached, or whose schema is older (STEAD_STORE_TOO_OLD: it was replaced since it was opened)
   * or newer than this code's.
   */
  async readiness(): Promise<StoreInfo> {
    await this.ready();
    const info = await this.store.check();
    if (info.schemaVersion < SCHEMA_VERSION) {
      throw new SteadError("STEAD_STORE_TOO_OLD", `the store ${info.location} has schema version ${info.schemaVersion}; this Stead writes ${SCHEMA_VERSION}`, { fix: "run `stead migrate` on it, or restart the server, which migrates it" });
    }
    return info;
  }

  /**
   * Writes every row of the store to `out` as a dump (`out` is not ended). Refused while a worker
   * holds a live lease; a lease whose process is known to be gone (same host) does not count.
   */
  async exportDump(out: Writable, options: Pick<ExportOptions, "allowLive" | "pageRows"> = {}): Promise<ExportSummary> {
    await this.ready();
    return exportStore(this.store, out, { ownerIsDead, ...options });
  }

  /** An online copy of this (SQLite) store in a new file, checked and carrying its own digests (see backup.ts). */
  async backup(file: string): Promise<BackupSummary> {
    await this.ready();
    // Loaded here: a worker or a server that takes no backup does not load it (or dumps) at start-up.
    const { takeBackup } = await import("./backup.js");
    return takeBackup(this.store, file);
  }

  /**
   * Loads a checked backup into this store, which must hold no rows, and verifies every table
   * against it. Its access tokens come only with `withTokens` (see importDump).
   */
  async restoreBackup(backup: CheckedBackup, options: Pick<ImportOptions, "withTokens"> = {}): Promise<RestoreSummary> {
    await this.ready();
    const restored = await backup.restoreInto(this.store, options);
    await (this.store as EncryptingStore).reloadKeys();
    return restored;
  }

  /**
   * Loads a dump into this store, which must hold no rows, and verifies every table against it;
   * an encrypted store's dump is checked against its signature with the keys this instance finds.
   * Its access tokens come only with `withTokens`: a token is who may act on the store, and a
   * plain dump's digests do not tell an edited dump from an exported one.
   */
  async importDump(dump: VerifiedDump | DumpInput, options: Pick<ImportOptions, "withTokens"> = {}): Promise<ImportSummary> {
    await this.ready();
    return importStore(this.store, dump, options);
  }

  /** Polls until `until(run)` holds (default: the run ended), or throws STEAD_TIMEOUT. */
  async waitFor(runId: string, options: { until?: (run: RunInfo) => boolean; timeoutMs?: number; pollMs?: number } = {}): Promise<RunInfo> {
    await this.ready();
    const until = options.until ?? ((r: RunInfo) => TERMINAL_STATUSES.includes(r.status));
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    for (;;) {
      const run = await this.view(await requireRun(this.store, runId));
      if (until(run)) return run;
      if (Date.now() > deadline) {
        throw new SteadError("STEAD_TIMEOUT", `run ${runId} is still ${run.status} after ${options.timeoutMs ?? 60_000} ms`, {
          runId,
          fix: `see why with \`stead why ${runId}\``,
        });
      }
      await new Promise((r) => setTimeout(r, options.pollMs ?? 50));
    }
  }

  /** Stops this instance's workers (gracefully) and closes the store. */
  async close(): Promise<void> {
    await Promise.all([...this.workers].map((w) => w.stop()));
    await this.controlWrites.drain();
    await this.store.close();
  }
}
