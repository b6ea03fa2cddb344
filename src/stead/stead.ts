import type { Writable } from "node:stream";
import { setTimeout as delay } from "node:timers/promises";
import { SteadError } from "../errors.js";
import { openStore } from "../store/index.js";
import { checkedStore } from "../store/capabilities.js";
import { payloadPipeline } from "../store/payload-pipeline.js";
import { controlStore, type ControlStore } from "./control-store.js";
import type { EncryptingStore } from "../store/encryption/encrypting-store.js";
import { defaultKeyDir, KeyChain, keyFileProvider, keyFromEnv, type KeyProvider } from "../store/encryption/key-providers.js";
import { Redactor, type RedactionOptions } from "../redaction/redactor.js";
import { childRuns } from "../store/run-sets.js";
import type { ListedRun, RunStatus, Store, StoreInfo, StoreTally, WaitKind } from "../store/types.js";
import { openWaits, type OpenWaits } from "../engine/runs/open-waits.js";
import { resolveOutputRefs } from "../engine/runs/output-refs.js";
import { TERMINAL_STATUSES } from "../store/types.js";
import { SCHEMA_VERSION } from "../store/schema/tables.js";
import { ownerIsDead } from "../worker/owner.js";
import { Worker, type WorkerOptions } from "../worker/worker.js";
import type * as verbs from "../engine/control/index.js";
import { requireRun } from "../engine/control/common.js";
import { control } from "../engine/control/lazy.js";
import { transcriptModule, whyModule } from "./lazy-reads.js";
import * as listing from "../engine/runs/listing.js";
import type { AnyDefinition, WorkflowDefinition } from "../engine/definitions/definition.js";
import { assertDistinctNames, isDefinition } from "../engine/definitions/definition.js";
import { checkChosenRunId, idExcerpt, newRunId } from "../engine/ids.js";
import { checkedInput } from "../engine/definitions/input-schema.js";
import { listWorkers, type WorkerView } from "../engine/definitions/serving-workers.js";
import { checkKey, DEFAULT_IDEMPOTENCY_TTL_MS, onceByKey, type Replayable } from "../engine/control/idempotency.js";
import { DEFAULT_PAYLOAD_LIMIT, encodePayload } from "../engine/payload.js";
import {
  eventView,
  holdView,
  runView,
  stepView,
  type EventStreamPage,
  type EventView,
  type HoldView,
  type RunInfo,
  type StepView,
} from "../engine/runs/views.js";
import type { ControlOptions } from "../engine/control/options.js";
import { NO_DECISION_FIELDS, type DecisionRules } from "../engine/control/decision-rules.js";
import type { Explanation } from "../engine/runs/why.js";
import { Session, sessionView, type SessionView } from "../engine/sessions/session.js";
import { checkWorkspace } from "../workspace/workspace-path.js";
import type { GcOptions, GcResult, TreeDiff } from "../workspace/index.js";
import { gcWorkspaces } from "../workspace/lazy.js";
import { diffRunSnapshots, readRunSnapshot, restoreRunSnapshot, runSnapshotEntries, runSnapshotFile, runSnapshots, type RestoreOptions, type RunSnapshotEntries, type RunSnapshotFile, type Restored, type RunSnapshots, type SnapshotFiles, type SnapshotFilesOptions } from "../engine/runs/snapshots.js";
import { sendToSession, turnViews, type TurnView } from "../engine/sessions/turns.js";
import { sessionTurns } from "../store/run-sets.js";
import type { SessionTranscript } from "../agent/session-transcript.js";
import type { DumpInput, ExportOptions, ExportSummary, ImportOptions, ImportSummary, VerifiedDump } from "../store/transfer/index.js";
import { exportStore, importStore } from "../store/transfer/lazy.js";
import { Tokens } from "../engine/access/tokens.js";
import { deleteFinishedRuns, type RunRetentionOptions, type RunRetentionSummary } from "../engine/runs/retention.js";
import { keysStatus, rotateKeys, type KeyRotation, type KeysStatus } from "./keys.js";
import type { BackupSummary, CheckedBackup, RestoreSummary } from "./backup.js";
import { bindVerbs, deprecateFlatMethods, type VerbsOf } from "./namespaces/bind.js";
import { RUNS_VERBS, steadRuns, type RunsBodies, type SteadRuns } from "./namespaces/runs.js";
import { SESSIONS_VERBS, steadSessions, type FlatSessions, type SessionsBodies, type SteadSessions } from "./namespaces/sessions.js";
import { WORKSPACES_VERBS, type SteadWorkspaces } from "./namespaces/workspaces.js";
import { DEFINITIONS_VERBS, steadDefinitions, type DefinitionsBodies, type FlatDefinitions, type SteadDefinitions } from "./namespaces/definitions.js";
import { WAITS_VERBS, steadWaits, type FlatWaits, type SteadWaits } from "./namespaces/waits.js";
import { steadHolds, type FlatHolds, type SteadHolds } from "./namespaces/holds.js";
import { KEYS_VERBS, type SteadKeys } from "./namespaces/keys.js";
import { ADMIN_VERBS, type SteadAdmin } from "./namespaces/admin.js";

export type { ControlOptions };
export { DEFAULT_ERASE_WAIT_MS, type EraseOptions, type Erased, type StartOptions, type FollowOptions } from "./verb-options.js";
import { DEFAULT_ERASE_WAIT_MS, type EraseOptions, type Erased, type StartOptions, type FollowOptions } from "./verb-options.js";

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

/** A Stead instance: one store, its runs, and workers. No process-wide state: several may coexist. */
export class Stead {
  readonly store: Store;
  /** The pipeline's sealing stage (its keys), under `store`. */
  private readonly sealing: EncryptingStore;
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
  /** The verbs, by what they act on (namespaces/); each flat method of the same body is deprecated. */
  readonly runs: SteadRuns;
  readonly sessions: Readonly<SteadSessions> & FlatSessions;
  readonly workspaces: Readonly<SteadWorkspaces>;
  readonly definitions: Readonly<SteadDefinitions> & FlatDefinitions;
  readonly waits: Readonly<SteadWaits> & FlatWaits;
  readonly holds: Readonly<SteadHolds> & FlatHolds;
  readonly keys: Readonly<SteadKeys>;
  readonly admin: Readonly<SteadAdmin>;
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
    const pipeline = payloadPipeline(base, { redactor: this.redactor, keyChain: this.keyChain, setUp: this.create });
    this.store = pipeline.store;
    this.sealing = pipeline.sealing;
    this.controlWrites = controlStore(this.store);
    this.payloadLimit = options.payloadLimitBytes ?? DEFAULT_PAYLOAD_LIMIT;
    this.idempotencyTtlMs = options.idempotencyTtlMs ?? DEFAULT_IDEMPOTENCY_TTL_MS;
    this.tokens = new Tokens(this);
    // Each type argument checks its verbs' map against this class: a body of another shape is a type error.
    const bind = <N>(verbs: VerbsOf<Stead, N>): N => bindVerbs(this, verbs);
    this.runs = steadRuns(this, bind<RunsBodies>(RUNS_VERBS));
    this.sessions = steadSessions(this, bind<SessionsBodies>(SESSIONS_VERBS));
    this.workspaces = Object.freeze(bind<SteadWorkspaces>(WORKSPACES_VERBS));
    this.definitions = steadDefinitions(this, bind<DefinitionsBodies>(DEFINITIONS_VERBS));
    this.waits = steadWaits(bind<SteadWaits>(WAITS_VERBS), this.runs);
    this.holds = steadHolds(this);
    this.keys = Object.freeze(bind<SteadKeys>(KEYS_VERBS));
    this.admin = Object.freeze(bind<SteadAdmin>(ADMIN_VERBS));
  }

  /** A run as the API returns it: payloads parsed, output references resolved (see output-refs.ts). */
  async view(row: ListedRun): Promise<RunInfo> {
    const v = runView(row);
    // A damaged row's sealed values are unread: nothing of it is resolved either.
    if (row.outputRefs === "[]" || v.output === undefined || v.output === null || row.damaged) return v;
    return { ...v, output: await resolveOutputRefs(this.store, row.id, v.output, row.outputRefs ?? null) };
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

  /** @deprecated use `stead.runs.start()` */
  async start<I, O>(definition: WorkflowDefinition<I, O>, input: I, options: StartOptions = {}): Promise<Replayable<{ id: string }>> {
    if (!isDefinition(definition)) {
      throw new SteadError("STEAD_INVALID_DEFINITION", "start() needs a definition made with workflow()", {
        fix: 'export const w = workflow("name", async (ctx, input) => ...); then stead.runs.start(w, input)',
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

  /** @deprecated use `stead.runs.startByName()` */
  async startByName(name: string, input: unknown, options: StartOptions = {}): Promise<Replayable<verbs.StartByNameResult>> {
    const key = this.keyOption(options);
    return (await control()).startByName(this.store, name, input, { id: options.id, workspace: options.workspace, by: options.by, key, payloadLimit: this.payloadLimit, ready: () => this.ready() });
  }


  /** @deprecated use `stead.definitions.workers()` */
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
    const { id } = await this.runs.start(definition, input, {
      ...(options.id !== undefined ? { id: options.id } : {}),
      ...(options.workspace !== undefined ? { workspace: options.workspace } : {}),
      ...(options.idempotencyKey !== undefined ? { idempotencyKey: options.idempotencyKey } : {}),
      ...(options.by !== undefined ? { by: options.by } : {}),
    });
    return this.runs.follow(id, [definition, ...(options.definitions ?? [])], options);
  }

  /** @deprecated use `stead.runs.follow()` */
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

  /** @deprecated use `stead.runs.get()` */
  async get(runId: string): Promise<RunInfo> {
    await this.ready();
    return this.view(await requireRun(this.store, runId));
  }

  /** @deprecated use `stead.runs.list()` */
  async list(query: listing.RunListQuery = {}): Promise<listing.RunListPage> {
    await this.ready();
    return listing.listRunPage(this.store, query, (r) => this.view(r));
  }

  /** @deprecated use `stead.runs.count()` */
  async count(filter: listing.RunListFilter = {}): Promise<number> {
    await this.ready();
    return this.store.countRuns(filter);
  }

  /** @deprecated use `stead.admin.tally()` */
  async tally(): Promise<StoreTally> {
    await this.ready();
    return this.store.tally();
  }

  /** @deprecated use `stead.runs.activity()` */
  async activity(runIds: readonly string[]): Promise<listing.RunActivityView[]> {
    await this.ready();
    return listing.runActivity(this.store, runIds);
  }

  /** @deprecated use `stead.runs.journal()` */
  async journal(runId: string): Promise<StepView[]> {
    await this.ready();
    await requireRun(this.store, runId);
    return (await this.store.journal(runId)).map(stepView);
  }

  /** @deprecated use `stead.runs.journalPage()` */
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

  /** @deprecated use `stead.waits.list()` */
  async openWaits(filter: { kind?: WaitKind; limit?: number } = {}): Promise<OpenWaits> {
    await this.ready();
    return openWaits(this.store, filter);
  }



  /** @deprecated use `stead.runs.events()` */
  async events(filter: { runId?: string; afterSeq?: number; limit?: number } = {}): Promise<EventView[]> {
    await this.ready();
    if (filter.runId) await requireRun(this.store, filter.runId);
    return (await this.store.events(filter)).map(eventView);
  }

  /** @deprecated use `stead.runs.eventsAfter()` */
  async eventsAfter(position?: string | null, filter: { runId?: string; runIds?: readonly string[]; limit?: number } = {}): Promise<EventStreamPage> {
    await this.ready();
    if (filter.runId !== undefined) await requireRun(this.store, filter.runId);
    const page = await this.store.eventsAfter(position ?? null, filter);
    return { events: page.events.map(eventView), position: page.position, positions: page.positions };
  }

  /** @deprecated use `stead.runs.approve()` */
  async approve(runId: string, name: string, d: verbs.Decision & ControlOptions = {}): Promise<Replayable<verbs.DecisionResult>> {
    const call = this.call(d);
    await this.ready();
    return (await control()).decide(call, runId, name, true, d);
  }

  /** @deprecated use `stead.runs.deny()` */
  async deny(runId: string, name: string, d: verbs.Decision & ControlOptions = {}): Promise<Replayable<verbs.DecisionResult>> {
    const call = this.call(d);
    await this.ready();
    return (await control()).decide(call, runId, name, false, d);
  }

  /** @deprecated use `stead.runs.signal()` */
  async signal(runId: string, name: string, payload: unknown, options: ControlOptions | string | null = null): Promise<Replayable<verbs.SignalResult>> {
    const o: ControlOptions = typeof options === "object" && options !== null ? options : { by: options };
    const call = this.call(o);
    await this.ready();
    return (await control()).signal(call, runId, name, payload);
  }

  /** @deprecated use `stead.runs.pause()` */
  async pause(runId: string, options: ControlOptions = {}): Promise<Replayable<verbs.PauseResult>> {
    const call = this.call(options);
    await this.ready();
    return (await control()).pause(call, runId);
  }

  /** @deprecated use `stead.runs.resume()` */
  async resume(runId: string, options: { acceptChange?: boolean } & ControlOptions = {}): Promise<Replayable<verbs.ResumeResult>> {
    const call = this.call(options);
    await this.ready();
    if (options.acceptChange) {
      const r = await (await control()).release(call, runId, "definition_changed", { choice: "accept-change", by: call.by });
      return { runId, from: "held", resumed: r.already ? [] : [runId], already: r.already };
    }
    return (await control()).resume(call, runId);
  }

  /** @deprecated use `stead.runs.retry()` */
  async retry(runId: string, options: ControlOptions = {}): Promise<Replayable<verbs.RetryResult>> {
    const call = this.call(options);
    await this.ready();
    return (await control()).retry(call, runId);
  }

  /** @deprecated use `stead.runs.cancel()` */
  async cancel(runId: string, options: { reason?: string } & ControlOptions = {}): Promise<Replayable<verbs.CancelResult>> {
    const call = this.call(options);
    await this.ready();
    return (await control()).cancel(call, runId, options.reason ?? null);
  }

  /** @deprecated use `stead.runs.release()` */
  async release(runId: string, hold: string | undefined, options: verbs.ReleaseOptions & ControlOptions): Promise<Replayable<HoldView>> {
    const call = this.call(options);
    await this.ready();
    const r = await (await control()).release(call, runId, hold, options);
    return { ...holdView(r), already: r.already };
  }

  /** @deprecated use `stead.runs.fork()` */
  async fork(runId: string, options: { at?: string; id?: string } & ControlOptions = {}): Promise<Replayable<verbs.ForkResult>> {
    if (options.id !== undefined) checkChosenRunId(options.id);
    const call = this.call(options);
    await this.ready();
    return (await control()).fork(call, runId, options.at, options.id);
  }

  /** @deprecated use `stead.runs.why()` */
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


  /** @deprecated use `stead.sessions.runIds()` */
  async sessionRunIds(sessionId: string): Promise<string[]> {
    await this.ready();
    return (await sessionTurns(this.store, sessionId)).map((r) => r.id);
  }

  /** @deprecated use `stead.sessions.lastTurn()` */
  async lastTurn(sessionId: string): Promise<(RunInfo & { turn: number }) | null> {
    await this.ready();
    const last = (await sessionTurns(this.store, sessionId)).pop();
    return last ? { ...(await this.view(last)), turn: last.turn ?? 0 } : null;
  }

  /** @deprecated use `stead.sessions.transcript()` */
  async transcript(sessionId: string): Promise<SessionTranscript> {
    await this.ready();
    return (await transcriptModule()).readSessionTranscript(this.store, sessionId);
  }

  /** @deprecated use `stead.sessions.get()` */
  async sessionWithTurns(sessionId: string): Promise<{ session: SessionView; turns: TurnView[] }> {
    await this.ready();
    const [summary] = await this.store.listSessions({ sessionId, limit: 1 });
    if (!summary) throw new SteadError("STEAD_SESSION_NOT_FOUND", `no session ${idExcerpt(sessionId)}`, { session: sessionId, fix: "list sessions with `stead sessions`" });
    return { session: sessionView(summary), turns: await turnViews(this, sessionId) };
  }

  /** @deprecated use `stead.sessions.send()` */
  async sendToSession(sessionId: string, input: unknown, options: ControlOptions = {}): Promise<Replayable<{ runId: string; turn: number }>> {
    return sendToSession(this, sessionId, input, options);
  }

  /** @deprecated use `stead.workspaces.snapshots()` */
  async snapshots(runId: string): Promise<RunSnapshots> {
    await this.ready();
    return runSnapshots(this.store, runId);
  }

  /** @deprecated use `stead.workspaces.restore()` */
  async restore(runId: string, options: RestoreOptions = {}): Promise<Restored> {
    await this.ready();
    return restoreRunSnapshot(this.store, runId, options);
  }

  /** @deprecated use `stead.workspaces.files()` */
  async snapshotFiles(runId: string, options: SnapshotFilesOptions = {}): Promise<SnapshotFiles> {
    await this.ready();
    return readRunSnapshot(this.store, runId, options);
  }

  /** @deprecated use `stead.workspaces.entries()` */
  async snapshotEntries(runId: string, choice: { step?: string; seq?: number } = {}): Promise<RunSnapshotEntries> {
    await this.ready();
    return runSnapshotEntries(this.store, runId, choice);
  }

  /** @deprecated use `stead.workspaces.file()` */
  async snapshotFile(runId: string, path: string, choice: { step?: string; seq?: number } = {}): Promise<RunSnapshotFile> {
    await this.ready();
    return runSnapshotFile(this.store, runId, path, choice);
  }

  /** @deprecated use `stead.workspaces.diff()` */
  async diff(runId: string, stepA: string, stepB: string): Promise<TreeDiff> {
    await this.ready();
    return diffRunSnapshots(this.store, runId, stepA, stepB);
  }

  /** @deprecated use `stead.runs.deleteFinished()` */
  async deleteFinishedRuns(options: RunRetentionOptions & EraseOptions): Promise<RunRetentionSummary & Erased> {
    await this.ready();
    const summary = await deleteFinishedRuns(this.store, options);
    return { ...summary, ...(await this.eraseFreed(options)) };
  }

  /** @deprecated use `stead.admin.gc()` */
  async gc(options: GcOptions & EraseOptions = {}): Promise<GcResult & Erased> {
    await this.ready();
    const result = await gcWorkspaces(this.store, options);
    return { ...result, ...(await this.eraseFreed(options)) };
  }

  private async eraseFreed(options: EraseOptions): Promise<Erased> {
    if (!this.store.eraseFreed) return {};
    return { erase: await this.store.eraseFreed(options.eraseWaitMs ?? DEFAULT_ERASE_WAIT_MS) };
  }

  /** @deprecated use `stead.keys.status()` */
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

  /** @deprecated use `stead.keys.rotate()` */
  async rotateKeys(key: KeyProvider): Promise<KeyRotation> {
    await this.ready();
    return rotateKeys(this.store, this.keyChain, key);
  }

  /** Where the store is, as people read it: a file path, or a URL without its password. */
  get location(): string {
    return this.store.location;
  }

  /** @deprecated use `stead.admin.storeInfo()` */
  async storeInfo(): Promise<StoreInfo> {
    await this.ready();
    return this.store.check();
  }

  /** @deprecated use `stead.admin.readiness()` */
  async readiness(): Promise<StoreInfo> {
    await this.ready();
    const info = await this.store.check();
    if (info.schemaVersion < SCHEMA_VERSION) {
      throw new SteadError("STEAD_STORE_TOO_OLD", `the store ${info.location} has schema version ${info.schemaVersion}; this Stead writes ${SCHEMA_VERSION}`, { fix: "run `stead migrate` on it, or restart the server, which migrates it" });
    }
    return info;
  }

  /** @deprecated use `stead.admin.exportDump()` */
  async exportDump(out: Writable, options: Pick<ExportOptions, "allowLive" | "pageRows"> = {}): Promise<ExportSummary> {
    await this.ready();
    return exportStore(this.store, out, { ownerIsDead, ...options });
  }

  /** @deprecated use `stead.admin.backup()` */
  async backup(file: string): Promise<BackupSummary> {
    await this.ready();
    // Loaded here: a worker or a server that takes no backup does not load it (or dumps) at start-up.
    const { takeBackup } = await import("./backup.js");
    return takeBackup(this.store, file);
  }

  /** @deprecated use `stead.admin.restoreBackup()` */
  async restoreBackup(backup: CheckedBackup, options: Pick<ImportOptions, "withTokens"> = {}): Promise<RestoreSummary> {
    await this.ready();
    const restored = await backup.restoreInto(this.store, options);
    await this.sealing.reloadKeys();
    return restored;
  }

  /** @deprecated use `stead.admin.importDump()` */
  async importDump(dump: VerifiedDump | DumpInput, options: Pick<ImportOptions, "withTokens"> = {}): Promise<ImportSummary> {
    await this.ready();
    return importStore(this.store, dump, options);
  }

  /** @deprecated use `stead.runs.waitFor()` */
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

// The flat methods warn from here on; the namespaces call the bodies as they were (namespaces/bind.ts).
deprecateFlatMethods(Stead.prototype, { runs: RUNS_VERBS, sessions: SESSIONS_VERBS, workspaces: WORKSPACES_VERBS, definitions: DEFINITIONS_VERBS, waits: WAITS_VERBS, keys: KEYS_VERBS, admin: ADMIN_VERBS });
