import { PortedStore, type StorePorts } from "../ported-store.js";
import { closeSync, existsSync, mkdirSync, openSync, renameSync, rmSync, statfsSync, statSync, writeSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import Database from "better-sqlite3";
import { SteadError } from "../../errors.js";
import type {
  CommitOptions,
  EventWrite,
  IdempotencyWrite,
  Mutation,
  NewRun,
  RunRow,
  StepRow,
  StepWrite,
  Store,
  StoreInfo,
  Unit,
  UnitResult,
} from "../types.js";
import { cannotRead, cannotWrite, isAccessError, unreachable } from "./access.js";
import { LATEST_VERSION, MIGRATIONS, STORE_MARKER } from "./migrations.js";
import { integrityProblems, readBackupRecord, vacuumInto } from "./backup.js";
import type { BackupRecord } from "../ports/backups.js";
import type { EraseReport } from "../ports/erasure.js";
import { keyTaken, storageFull, type StorageCheck } from "../faults.js";
import { FileIdentity } from "./file-identity.js";
import { warnIfExposed } from "./exposed-files.js";
import { insertedRow, toRun, toStep } from "../rows.js";
import { sqliteClaims } from "./claims.js";
import { sqliteRunReads } from "./run-reads.js";
import { sqliteTransferRows } from "./transfer-rows.js";
import { sqlTallies } from "../sql/tallies-port.js";
import { sqlTokens } from "../sql/tokens-port.js";
import { sqlDataKeys } from "../sql/data-keys-port.js";
import { sqliteIdempotencyKeys } from "./idempotency-keys.js";
import { sqliteRetention } from "./retention.js";
import { sqliteSnapshotsAndBlobs } from "./snapshots-blobs.js";
import { sqliteDefinitions } from "./definitions.js";
import { sqliteDriver, type SqliteConnection } from "./connection.js";
import * as migrationLog from "../sql/migration-log.js";
import { checkSnapshotWrites } from "../snapshot-rows.js";
import { checkEventDeletes } from "../event-deletes.js";
import * as reads from "../sql/reads.js";
import { STEP_UPSERT_SQL } from "../mutation/step-write.js";
import { storedStepParams } from "./stored-payload.js";
import { SNAPSHOT_UPSERT_SQL, snapshotParams } from "../mutation/snapshot-write.js";
import { mutationApplier, PreconditionFailed, type Applied } from "./apply-mutation.js";
import { type SnapshotWrite } from "../types.js";

/** A failure one start of a batch can cause alone: its values, or its size against the room left. */
function oneStartsFault(e: unknown): boolean {
  if (e instanceof TypeError || e instanceof RangeError) return true;
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code === "STEAD_STORAGE_FULL" || code.startsWith("SQLITE_CONSTRAINT") || code === "SQLITE_TOOBIG" || code === "SQLITE_MISMATCH");
}

const RUN_INSERT_COLUMNS = ["id", "definition", "module", "fingerprint", "status", "input", "parent_id", "parent_step_id", "session_id", "turn", "workspace", "created_at", "updated_at"] as const;
const INSERT_RUN_SQL = `INSERT INTO runs (${RUN_INSERT_COLUMNS.join(", ")}) VALUES (${RUN_INSERT_COLUMNS.map(() => "?").join(", ")})`;

/** How long a retention delete's checkpoint waits for readers of older -wal frames (see `erasing`). */
const ERASE_CHECKPOINT_WAIT_MS = 200;
/** Between a manual gc's tries at that checkpoint (`eraseFreed`). */
const ERASE_RETRY_MS = 100;
/** The stead_meta row recording an erase a reader kept from finishing (see `erasing`). */
const ERASE_PENDING_KEY = "erase-pending";

/** Taken when this module loads: a test's fake timers must not keep starts from being written. */
const nextTurn = setImmediate;

interface QueuedStart {
  run: NewRun;
  events: EventWrite[];
  idempotency: IdempotencyWrite | undefined;
  resolve(row: RunRow): void;
  reject(e: unknown): void;
}

export interface SqliteStoreOptions {
  /** Database file. Default `.stead/stead.db` under the current directory. */
  path?: string;
  /** Create the file (and its directory) when missing. Default true. */
  create?: boolean;
  /** `FULL` (default): an acknowledged commit survives power loss. `NORMAL` trades that for speed. */
  synchronous?: "FULL" | "NORMAL";
  /** How long a writer waits for another process's write lock, in ms. Default 10 000. */
  busyTimeoutMs?: number;
  /**
   * A ceiling on the database file's size, in bytes (SQLite's page limit): a write that would pass
   * it fails as a full disk does, and the worker holds its runs `storage` until space returns.
   * Default: none.
   */
  maxSizeBytes?: number;
  /**
   * Room kept aside for the bookkeeping of a full store, in bytes (default 1 MiB; 0: none): a
   * file `<store>-reserve` beside the store, and as many pages under `maxSizeBytes`. When a write
   * fails for lack of space the worker releases it, so the runs' `storage` holds can still be
   * written and people see why their runs stopped; it is put back once space returns.
   */
  reserveBytes?: number;
  /**
   * Overwrite what a delete or an update frees with zeros (SQLite's secure_delete), and empty the
   * -wal after retention's deletes, so a deleted run's bytes do not stay in the store's files.
   * Default true. False saves the writing of freed pages: deleted rows' bytes then stay in free
   * space until it is reused.
   */
  secureDelete?: boolean;
  /**
   * Open an existing store read-only (the CLI's read verbs): an SQLite read-only connection, no
   * WAL switch, and `migrate()` only checks that the schema is current (an older one is refused,
   * naming `stead migrate`). Writes fail. Implies `create: false`.
   */
  readonly?: boolean;
}

export const DEFAULT_SQLITE_PATH = ".stead/stead.db";

type Raw = Record<string, unknown>;

export class SqliteStore extends PortedStore implements Store {
  readonly dialect = "sqlite";
  readonly leaseClock = "caller";
  readonly location: string;
  private readonly db: Database.Database;
  private readonly stmts = new Map<string, Database.Statement>();
  private closed = false;
  /** Starts waiting for this turn's transaction (createRun). */
  private starts: QueuedStart[] = [];
  /** Who hears this object's wake-ups (onWake). */
  private readonly wakeListeners = new Set<() => void>();
  /** The file this connection opened: every read and write checks the path still names it (see `written`, `read`). */
  private readonly file: FileIdentity;
  private readonly reserveBytes: number;
  private readonly maxPages: number | undefined;
  private readonly readonly: boolean;
  private readonly secureDelete: boolean;
  /** Each port's statements, in a file of its own over the connection (connection.ts). */
  protected readonly ports: StorePorts;

  constructor(options: SqliteStoreOptions = {}) {
    super();
    const path = resolve(options.path ?? DEFAULT_SQLITE_PATH);
    this.location = path;
    this.readonly = options.readonly ?? false;
    this.secureDelete = options.secureDelete ?? true;
    const create = !this.readonly && (options.create ?? true);
    const there = existsSync(path);
    if (!there) {
      const hidden = unreachable(path);
      if (hidden) throw hidden;
      if (!create) {
        throw new SteadError("STEAD_STORE_MISSING", `no Stead store at ${path}`, {
          fix: "start a run first (`stead run <file>`) or point --store at an existing store",
        });
      }
    }
    // Unless the store may be written, SQLite opens it read-only without a word and the first write
    // fails: a write verb is refused up front, naming the path and the permission it lacks.
    if (!this.readonly) {
      const problem = cannotWrite(path);
      if (problem) throw problem;
    }
    if (!there) {
      try {
        createPrivateFile(path);
      } catch (e) {
        throw this.openError(e);
      }
    }
    try {
      this.db = new Database(path, { fileMustExist: !create, readonly: this.readonly });
      this.db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 10_000}`);
      const info = this.readVersion();
      // Only a Stead store's: a file that is not one is refused as such, and that is all that is said.
      if (there && info.marker === STORE_MARKER) warnIfExposed(path);
      if (!this.readonly) {
        // Switching to WAL rewrites the file header: a file that is not (yet) a Stead store is left untouched.
        if (info.empty || info.marker === STORE_MARKER) this.db.pragma("journal_mode = WAL");
        this.db.pragma(`synchronous = ${options.synchronous ?? "FULL"}`);
        this.db.pragma(`secure_delete = ${this.secureDelete ? "ON" : "OFF"}`);
      }
      this.reserveBytes = this.readonly ? 0 : Math.max(0, options.reserveBytes ?? 1024 * 1024);
      if (options.maxSizeBytes !== undefined) {
        this.maxPages = Math.max(1, Math.floor(options.maxSizeBytes / this.pageSize()));
        this.limitPages(this.reserveBytes);
      }
    } catch (e) {
      throw this.openError(e);
    }
    this.file = FileIdentity.of(path);
    const connection: SqliteConnection = {
      db: this.db,
      stmt: (sql) => this.stmt(sql),
      written: (fn) => this.written(fn),
      write: (fn) => rejectedOnThrow(() => this.written(fn)),
      erasing: (fn) => this.erasing(fn),
      read: (fn) => this.read(fn),
      insertEvents: (runId, events, at) => this.insertEvents(runId, events, at),
      journal: (runId) => this.journalSync(runId),
      wake: () => this.wake(),
    };
    const driver = sqliteDriver(connection);
    this.ports = {
      claims: sqliteClaims(connection),
      runReads: sqliteRunReads(connection),
      rows: sqliteTransferRows(connection),
      tallies: sqlTallies(driver),
      idempotency: sqliteIdempotencyKeys(connection),
      runRetention: sqliteRetention(connection),
      blobStore: sqliteSnapshotsAndBlobs(connection),
      tokens: sqlTokens(driver),
      keys: sqlDataKeys(driver),
      definitions: sqliteDefinitions(connection),
    };
  }

  /**
   * Every write goes through here. Hazard: a store file deleted (or replaced) under an open
   * connection still accepts writes, into a file no one else will ever read; so the path is checked
   * after each write (a batch is one write), failed or not, and a write that may have landed in a
   * vanished file is reported as lost, never as done; once lost, no write is tried (file-identity.ts).
   * The path is not looked at before the write as well: a write into a file already gone is caught
   * by the check after it, and two stats per commit were a tenth of W1's CPU with
   * synchronous=NORMAL. A write that fails for lack of space is STEAD_STORAGE_FULL.
   */
  private written<T>(fn: () => T): T {
    this.file.assertNotLost();
    let value: T;
    try {
      value = fn();
    } catch (e) {
      // A write that failed in a vanished file is reported as the store lost, whatever SQLite said.
      this.file.assertSame();
      if ((e as { code?: unknown }).code === "SQLITE_FULL") throw storageFull(this.location, e);
      throw e;
    }
    this.file.assertSame();
    return value;
  }

  /**
   * Every read goes through here, for the same hazard: what a vanished file answers may be a write
   * that was refused (it landed before the check after it), so a read is shown only if the path
   * still named the opened file once it was done. A refusal reaches the caller as a rejection.
   */
  private read<T>(fn: () => T): Promise<T> {
    return rejectedOnThrow(() => {
      this.file.assertNotLost();
      const value = fn();
      this.file.assertSame();
      return value;
    });
  }

  /**
   * A retention delete (`fn`, one write): what it frees is overwritten, not just unlinked. SQLite
   * leaves a deleted row's bytes in the pages it frees (in the store file) and in the -wal frames
   * that wrote it earlier, where a scan of the files finds them. With secure_delete on (unless
   * the store was opened without it), the freed and rewritten pages are zeroed; then a truncating
   * checkpoint copies those pages over the old ones in the store file and empties the -wal.
   * Secure_delete must be on for every write, not only these: a row rewritten earlier (a run's status) left its old copy in its page's free space, which no
   * later delete of the row overwrites. Readers that still need older frames make the
   * checkpoint give up after a moment (it never waits the full busy timeout: this thread may be a
   * worker's, with leases to renew); the erase is then recorded as pending in the store, and
   * finished by `eraseFreed` (a manual gc, which waits longer) or `finishErase` (any worker's
   * sweeper, once the reader is done).
   */
  private erasing<T>(fn: () => T): T {
    const value = this.written(fn);
    if (!this.secureDelete) return value;
    if (!this.truncateWal(ERASE_CHECKPOINT_WAIT_MS)) this.markErasePending();
    return value;
  }

  /**
   * A truncating checkpoint, waiting at most `waitMs` for readers and writers: true when it
   * completed (every frame copied into the store file, the -wal emptied). SQLite's own checkpoints
   * are passive: they never empty the -wal, and a -wal started again overwrites only from its start.
   */
  private truncateWal(waitMs: number): boolean {
    const busy = Number(this.db.pragma("busy_timeout", { simple: true }));
    this.db.pragma(`busy_timeout = ${Math.min(busy, waitMs)}`);
    try {
      const [row] = this.db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number }[];
      return row?.busy === 0;
    } catch {
      // A checkpoint that cannot run now (the store busy, locked) is tried again later.
      return false;
    } finally {
      this.db.pragma(`busy_timeout = ${busy}`);
    }
  }

  private erasePending(): boolean {
    return this.stmt("SELECT 1 FROM stead_meta WHERE key = ?").get(ERASE_PENDING_KEY) !== undefined;
  }

  private markErasePending(): void {
    try {
      this.written(() => this.stmt("INSERT INTO stead_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING").run(ERASE_PENDING_KEY, JSON.stringify({ since: Date.now() })));
    } catch {
      // The deletes stand; unrecorded, the erase waits for the next delete or manual gc.
    }
  }

  /** The truncating checkpoint, then the pending record cleared (and the -wal emptied of that write too). */
  private tryErase(waitMs: number): boolean {
    if (!this.truncateWal(waitMs)) return false;
    if (this.erasePending()) {
      this.written(() => this.stmt("DELETE FROM stead_meta WHERE key = ?").run(ERASE_PENDING_KEY));
      this.truncateWal(waitMs);
    }
    return true;
  }

  async eraseFreed(waitMs: number): Promise<EraseReport> {
    if (this.readonly) return { erased: false, pending: { files: this.fileSizes(), reason: "the store was opened read-only" } };
    if (!this.secureDelete) return { erased: false, pending: { files: this.fileSizes(), reason: "the store was opened with secureDelete: false, which leaves freed pages as they are" } };
    const until = Date.now() + waitMs;
    for (;;) {
      if (this.tryErase(ERASE_CHECKPOINT_WAIT_MS)) return { erased: true };
      if (Date.now() >= until) break;
      await new Promise((r) => setTimeout(r, ERASE_RETRY_MS));
    }
    this.markErasePending();
    return {
      erased: false,
      pending: { files: this.fileSizes(), reason: `another connection kept reading the store from before the deletes for ${Math.round(waitMs / 1000)} s (a server, a worker, an export or a backup in progress)` },
    };
  }

  private fileSizes(): { path: string; bytes: number }[] {
    return [this.location, `${this.location}-wal`].flatMap((path) => {
      const st = statSync(path, { throwIfNoEntry: false });
      return st ? [{ path, bytes: st.size }] : [];
    });
  }

  finishErase(): Promise<boolean> {
    if (this.readonly || !this.secureDelete) return Promise.resolve(false);
    return this.read(() => this.erasePending()).then((pending) => pending && this.tryErase(0));
  }

  private pageSize(): number {
    return Number(this.db.pragma("page_size", { simple: true }));
  }

  /** The page limit of `maxSizeBytes`, less `reserve` bytes held back. */
  private limitPages(reserve: number): void {
    if (this.maxPages === undefined) return;
    this.db.pragma(`max_page_count = ${Math.max(1, this.maxPages - Math.ceil(reserve / this.pageSize()))}`);
  }

  private get reservePath(): string {
    return `${this.location}-reserve`;
  }

  /** Puts the reserve (file and pages) in place if it is missing; a full disk just leaves it missing. */
  restoreReserve(): Promise<void> {
    if (this.reserveBytes === 0) return Promise.resolve();
    this.limitPages(this.reserveBytes);
    if (existsSync(this.reservePath)) return Promise.resolve();
    const partial = `${this.reservePath}.${process.pid}`;
    try {
      const fd = openSync(partial, "w", 0o600);
      try {
        const chunk = Buffer.alloc(64 * 1024, 0x52);
        for (let n = 0; n < this.reserveBytes; n += chunk.length) writeSync(fd, chunk, 0, Math.min(chunk.length, this.reserveBytes - n));
      } finally {
        closeSync(fd);
      }
      renameSync(partial, this.reservePath);
    } catch {
      rmSync(partial, { force: true });
    }
    return Promise.resolve();
  }

  /** Frees the reserve for a full store's bookkeeping; false when there was none left to free. */
  releaseReserve(): Promise<boolean> {
    if (this.reserveBytes === 0) return Promise.resolve(false);
    this.limitPages(0);
    const had = existsSync(this.reservePath);
    rmSync(this.reservePath, { force: true });
    return Promise.resolve(had || this.maxPages !== undefined);
  }

  /**
   * Room to write, without writing: the file system's free space for unprivileged writers, and the
   * page limit (`maxSizeBytes`) less the pages in use; pages on the free list count as room.
   */
  checkStorage(needBytes: number): Promise<StorageCheck> {
    const fs = statfsSync(dirname(this.location));
    const disk = Number(fs.bavail) * Number(fs.bsize);
    const inUse = Number(this.db.pragma("page_count", { simple: true })) - Number(this.db.pragma("freelist_count", { simple: true }));
    const byPages = this.maxPages === undefined ? Infinity : (this.maxPages - inUse) * this.pageSize();
    const freeBytes = Math.max(0, Math.min(disk, byPages));
    const detail = byPages < disk ? `${freeBytes} bytes left under the store's size limit` : `${freeBytes} bytes free on the file system of ${dirname(this.location)}`;
    // The reserve must fit again too, or the next full disk would find none.
    const reserve = this.reserveBytes > 0 && (this.maxPages !== undefined || !existsSync(this.reservePath)) ? this.reserveBytes : 0;
    return Promise.resolve({ ok: freeBytes >= needBytes + reserve, freeBytes, needBytes: needBytes + reserve, detail });
  }

  backupInto(file: string): Promise<void> {
    return this.read(() => vacuumInto(this.db, file));
  }

  integrityProblems(): Promise<string[]> {
    return this.read(() => integrityProblems(this.db));
  }

  backupRecord(): Promise<BackupRecord | undefined> {
    return this.read(() => readBackupRecord(this.db));
  }

  /** A failure to open or read the store: a permission problem says so, anything else is "not a store". */
  private openError(e: unknown): SteadError {
    if (e instanceof SteadError) return e;
    if (!isAccessError(e)) return notAStore(this.location, e);
    const msg = e instanceof Error ? e.message : String(e);
    if (this.readonly) {
      return (
        cannotRead(this.location) ??
        new SteadError("STEAD_STORE_NOT_READABLE", `cannot read the store ${this.location} (${msg})`, {
          path: this.location,
          fix: `check that this user may read ${this.location}, and may write its directory unless ${basename(this.location)}-wal and -shm exist beside it`,
          cause: e,
        })
      );
    }
    return (
      cannotWrite(this.location) ??
      new SteadError("STEAD_STORE_NOT_WRITABLE", `cannot write the store ${this.location} (${msg})`, {
        path: this.location,
        fix: `check that this user may read and write ${this.location} and its directory`,
        cause: e,
      })
    );
  }

  private stmt(sql: string): Database.Statement {
    let s = this.stmts.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      // Listings vary over many shapes (filters, statuses, cursor): the cache stays bounded.
      if (this.stmts.size < 1000) this.stmts.set(sql, s);
    }
    return s;
  }

  private readVersion(): { marker: string | undefined; version: number; empty: boolean } {
    try {
      const tables = this.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
      const names = new Set(tables.map((t) => t.name));
      if (names.size === 0) return { marker: undefined, version: 0, empty: true };
      if (!names.has("stead_meta") || !names.has("stead_migrations")) return { marker: undefined, version: 0, empty: false };
      const marker = (this.db.prepare(migrationLog.STORE_MARKER).get() as { value?: string } | undefined)?.value;
      const v = this.db.prepare(migrationLog.LATEST_MIGRATION).get() as { v: number | null };
      return { marker, version: v.v ?? 0, empty: false };
    } catch (e) {
      throw this.openError(e);
    }
  }

  private assertReadable(info: { marker: string | undefined; version: number; empty: boolean }): void {
    if (!info.empty && info.marker !== STORE_MARKER) {
      throw new SteadError("STEAD_NOT_A_STORE", `${this.location} is an SQLite database but not a Stead store`, {
        fix: "point --store (or STEAD_STORE) at a Stead store, or at a path that does not exist yet",
      });
    }
    if (info.version > LATEST_VERSION) {
      throw new SteadError(
        "STEAD_STORE_TOO_NEW",
        `the store ${this.location} has schema version ${info.version}, newer than this Stead's ${LATEST_VERSION}`,
        { fix: "upgrade stead to the version that wrote this store" },
      );
    }
  }

  // Async so that a failure reaches the caller as a rejection, never as a synchronous throw.
  async migrate(): Promise<void> {
    if (this.readonly) return this.assertCurrent();
    try {
      this.applyMigrations();
    } catch (e) {
      // Only a permission problem is explained here; anything else is the migration's own failure.
      throw isAccessError(e) ? this.openError(e) : e;
    }
    return Promise.resolve();
  }

  /** A read-only store is read as it is: its schema must be this Stead's. */
  private assertCurrent(): Promise<void> {
    const info = this.readVersion();
    this.assertReadable(info);
    if (info.empty) throw emptyStore(this.location);
    if (info.version < LATEST_VERSION) {
      throw new SteadError("STEAD_STORE_TOO_OLD", `the store ${this.location} has schema version ${info.version}, older than this Stead's ${LATEST_VERSION}: it needs a migration before it can be read`, {
        fix: "run `stead migrate` on it (as a user who may write it), then try again",
      });
    }
    return Promise.resolve();
  }

  private applyMigrations(): void {
    const seen = this.readVersion();
    this.assertReadable(seen);
    // A schema only moves forward: a store already at this Stead's version needs no write lock, so
    // a process starts while another holds the lock (a long write, a process frozen mid-commit).
    if (!seen.empty && seen.version === LATEST_VERSION) return;
    // The emptiness check is inside the write lock: processes that all found no store when they
    // opened it (several `stead run` started at once in a new directory) create its schema once.
    this.written(() =>
      this.db.transaction(() => {
        const info = this.readVersion();
        this.assertReadable(info);
        if (!info.empty) return;
        this.db.exec(`
          CREATE TABLE stead_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
          CREATE TABLE stead_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL);
        `);
        this.db.prepare("INSERT INTO stead_meta (key, value) VALUES ('marker', ?)").run(STORE_MARKER);
      }).immediate(),
    );
    for (const m of MIGRATIONS) {
      this.written(() => this.db.transaction(() => {
        const done = this.db.prepare(migrationLog.MIGRATION_APPLIED).get(m.version);
        if (done) return;
        this.db.exec(m.sql);
        this.db.prepare(migrationLog.RECORD_MIGRATION).run(m.version, m.name, Date.now());
      }).immediate());
    }
  }

  check(): Promise<StoreInfo> {
    return this.read(() => {
      const info = this.readVersion();
      this.assertReadable(info);
      if (info.empty) throw emptyStore(this.location);
      return { dialect: this.dialect, location: this.location, schemaVersion: info.version };
    });
  }

  close(): Promise<void> {
    if (!this.closed) {
      // Starts already asked for are written (or refused) before the file closes, as they would
      // have been had they not waited for company.
      this.writeStarts();
      this.closed = true;
      this.db.close();
    }
    return Promise.resolve();
  }








  private journalSync(runId: string): StepRow[] {
    return (this.stmt(reads.JOURNAL).all(runId) as Raw[]).map(toStep);
  }






  /**
   * Group commit for starts: the runs asked for in one turn of the event loop are written in one
   * transaction, so one refused (its id or idempotency key taken) leaves the others, and each
   * caller is answered only once the transaction is durable. Anything else that fails fails them
   * all, as one commit would. A start with an idempotency key runs in a savepoint of its own (its
   * key is recorded before its id can be refused); one without is refused before it writes, and a
   * savepoint would only cost (see commitTransaction).
   */
  createRun(run: NewRun, events: EventWrite[], idempotency?: IdempotencyWrite): Promise<RunRow> {
    return new Promise<RunRow>((resolve, reject) => {
      if (this.starts.push({ run, events, idempotency, resolve, reject }) === 1) nextTurn(() => this.writeStarts());
    });
  }

  private writeStarts(): void {
    const batch = this.starts;
    this.starts = [];
    this.writeBatch(batch);
  }

  /**
   * A batch that fails as a whole for one start's fault (a value the schema refuses, a row too big
   * for the room left) is written again one start at a time, so only that start's caller fails.
   * A store gone fails them all at once.
   */
  private writeBatch(batch: QueuedStart[]): void {
    if (batch.length === 0) return;
    const outcomes: ({ ok: true; row: RunRow } | { ok: false; error: unknown })[] = [];
    try {
      this.written(() =>
        this.db.transaction(() => {
          for (const s of batch) {
            try {
              outcomes.push({ ok: true, row: s.idempotency ? this.db.transaction(() => this.insertStart(s))() : this.insertStart(s) });
            } catch (e) {
              if (!(e instanceof SteadError)) throw e;
              outcomes.push({ ok: false, error: e });
            }
          }
        }).immediate(),
      );
    } catch (e) {
      if (batch.length > 1 && oneStartsFault(e)) {
        for (const s of batch) this.writeBatch([s]);
        return;
      }
      for (const s of batch) s.reject(e);
      return;
    }
    if (outcomes.some((o) => o.ok && o.row.status === "pending")) this.wake();
    batch.forEach((s, i) => {
      const o = outcomes[i];
      if (o?.ok) s.resolve(o.row);
      else s.reject(o?.error ?? new Error("a start was not written"));
    });
  }

  private insertStart({ run, events, idempotency }: QueuedStart): RunRow {
    if (idempotency && !this.recordKey(idempotency, run.createdAt)) throw keyTaken(idempotency.verb, idempotency.scope, idempotency.key);
    if (this.stmt("SELECT 1 FROM runs WHERE id = ?").get(run.id)) {
      throw new SteadError("STEAD_ID_TAKEN", `a run with id ${run.id} already exists`, {
        runId: run.id,
        fix: "choose another run id, or omit it to get a fresh one",
      });
    }
    const inserted = this.insertRun(run);
    this.insertEvents(run.id, events, run.createdAt);
    return inserted;
  }

  /**
   * A session's turn is 1 + its highest turn. Every write runs in a BEGIN IMMEDIATE transaction
   * (one writer at a time across processes), so that read and this insert are atomic.
   */
  private insertRun(run: NewRun): RunRow {
    const sessionId = run.sessionId ?? null;
    const turn = sessionId === null ? null : Number((this.stmt("SELECT coalesce(max(turn), 0) + 1 AS t FROM runs WHERE session_id = ?").get(sessionId) as Raw).t);
    const values: Record<(typeof RUN_INSERT_COLUMNS)[number], unknown> = {
      id: run.id,
      definition: run.definition,
      module: run.module,
      fingerprint: run.fingerprint,
      status: run.status ?? "pending",
      input: run.input,
      parent_id: run.parentId ?? null,
      parent_step_id: run.parentStepId ?? null,
      session_id: sessionId,
      turn,
      workspace: run.workspace ?? null,
      created_at: run.createdAt,
      updated_at: run.createdAt,
    };
    this.stmt(INSERT_RUN_SQL).run(...RUN_INSERT_COLUMNS.map((c) => values[c]));
    const row = insertedRow("runs", toRun, values);
    if (run.journal?.length) this.upsertSteps(run.id, run.journal);
    return row;
  }

  private upsertSteps(runId: string, steps: readonly StepWrite[]): void {
    const s = this.stmt(STEP_UPSERT_SQL);
    for (const st of steps) s.run(...storedStepParams(runId, st));
  }

  private insertEvents(runId: string, events: readonly EventWrite[] | undefined, at: number): void {
    if (!events) return;
    const s = this.stmt("INSERT INTO events (run_id, type, at, data) VALUES (?, ?, ?, ?)");
    for (const e of events) s.run(runId, e.type, at, JSON.stringify(e.data ?? {}));
  }

  /** Records a key unless one is recorded and unexpired; false then. An expired one is replaced. */
  private recordKey(k: IdempotencyWrite, now: number): boolean {
    const r = this.stmt(
      `INSERT INTO idempotency_keys (verb, scope, key, digest, summary, result, actor, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (verb, scope, key) DO UPDATE SET digest = excluded.digest, summary = excluded.summary, result = excluded.result,
         actor = excluded.actor, created_at = excluded.created_at, expires_at = excluded.expires_at
       WHERE idempotency_keys.expires_at <= excluded.created_at`,
    ).run(k.verb, k.scope, k.key, k.digest, k.summary, k.result, k.actor, now, now + k.ttlMs);
    return r.changes > 0;
  }



  async commit(units: Unit[], options: CommitOptions = {}): Promise<UnitResult[]> {
    checkSnapshotWrites(units);
    checkEventDeletes(units);
    const { results, wake } = this.written(() => this.commitTransaction().immediate(units, Date.now(), options.beforeCommit));
    if (wake) this.wake();
    return Promise.resolve(results);
  }

  private commitTx: Database.Transaction<(units: Unit[], now: number, beforeCommit: (() => void) | undefined) => { results: UnitResult[]; wake: boolean }> | undefined;

  /**
   * Built once: every db.transaction() call builds four wrapper functions, a cost paid per step
   * otherwise. A refused mutation has written nothing (mutation/plan.ts: every check runs before
   * any write, and the one check that writes, the idempotency key, runs last and writes only when
   * it passes). So a refusal needs undoing only when an earlier mutation of its unit has written:
   * a unit gets a savepoint only when a mutation after its first can refuse it (one that is not
   * optional); an optional mutation never needs one. Savepoints are not free: in a group commit
   * SQLite's sub-journal of them outgrows memory and copies every page a unit touches to a temp
   * file (measured: 2x the time of an approval). A wake counts only what was kept.
   */
  private commitTransaction(): Database.Transaction<(units: Unit[], now: number, beforeCommit: (() => void) | undefined) => { results: UnitResult[]; wake: boolean }> {
    if (this.commitTx) return this.commitTx;
    const applyUnit = (unit: Unit, now: number): Applied => {
      let pauseRequested = false;
      let wake = false;
      for (const m of unit) {
        if (!m.optional) {
          const r = this.applyMutation(m, now);
          pauseRequested ||= r.pauseRequested;
          wake ||= r.wake;
          continue;
        }
        try {
          wake = this.applyMutation(m, now).wake || wake;
        } catch (e) {
          if (e instanceof PreconditionFailed) continue;
          throw e;
        }
      }
      return { pauseRequested, wake };
    };
    const applyUnitInSavepoint = this.db.transaction(applyUnit);
    this.commitTx = this.db.transaction((units: Unit[], now: number, beforeCommit: (() => void) | undefined) => {
      let wake = false;
      const results: UnitResult[] = units.map((unit) => {
        try {
          const r = unit.some((m, i) => i > 0 && !m.optional) ? applyUnitInSavepoint(unit, now) : applyUnit(unit, now);
          wake ||= r.wake;
          return { ok: true, pauseRequested: r.pauseRequested };
        } catch (e) {
          if (e instanceof PreconditionFailed) return e.result;
          throw e;
        }
      });
      beforeCommit?.();
      return { results, wake };
    });
    return this.commitTx;
  }

  private applyMutationFn: ((m: Mutation, now: number) => Applied) | undefined;

  /** Applies one mutation as mutation/plan.ts says (apply-mutation.ts). Throws PreconditionFailed, which rolls back the savepoint. */
  private applyMutation(m: Mutation, now: number): Applied {
    this.applyMutationFn ??= mutationApplier({
      stmt: (sql) => this.stmt(sql),
      recordKey: (k, at) => this.recordKey(k, at),
      upsertSteps: (runId, steps) => this.upsertSteps(runId, steps),
      upsertSnapshots: (runId, snapshots) => this.upsertSnapshots(runId, snapshots),
      insertRun: (run) => this.insertRun(run),
      insertEvents: (runId, events, at) => this.insertEvents(runId, events, at),
    });
    return this.applyMutationFn(m, now);
  }

  /** Wake-ups within this process (ports/wakeups.ts). */
  onWake(listener: () => void): () => void {
    // A wrapper of its own: the same function subscribed twice is two subscriptions.
    const entry = (): void => listener();
    this.wakeListeners.add(entry);
    return () => this.wakeListeners.delete(entry);
  }

  /** Called after a write committed, outside its transaction: a listener that throws never undoes or fails the write. */
  private wake(): void {
    for (const l of [...this.wakeListeners]) {
      try {
        l();
      } catch {
        // A listener's fault is its own; the write is done.
      }
    }
  }




  private upsertSnapshots(runId: string, snapshots: readonly SnapshotWrite[]): void {
    const s = this.stmt(SNAPSHOT_UPSERT_SQL);
    for (const x of snapshots) s.run(...snapshotParams(runId, x));
  }












}

/**
 * An empty store file readable by its owner alone, in directories made for it likewise (0700):
 * SQLite gives its -wal and -shm files the mode of the store file, so they follow. Under the usual
 * umask (022) SQLite would create all three readable by every user of the machine. Another
 * process creating the same store at once is fine: the file is then its.
 */
function createPrivateFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    closeSync(openSync(path, "wx", 0o600));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  }
}

function emptyStore(path: string): SteadError {
  return new SteadError("STEAD_STORE_MISSING", `${path} is empty: it holds no Stead store`, {
    fix: "start a run first (`stead run <file>`) or point --store at an existing store",
  });
}

function notAStore(path: string, e: unknown): SteadError {
  const msg = e instanceof Error ? e.message : String(e);
  return new SteadError("STEAD_NOT_A_STORE", `${path} is not a Stead store (${msg})`, {
    fix: "point --store (or STEAD_STORE) at a Stead store, or at a path that does not exist yet",
    cause: e,
  });
}

export function openSqliteStore(options: SqliteStoreOptions = {}): SqliteStore {
  return new SqliteStore(options);
}

/** `fn`'s value, or its throw as a rejection: a refused query rejects, as every store's does. */
function rejectedOnThrow<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (e) {
    return Promise.reject(e instanceof Error ? e : new Error(String(e)));
  }
}
