import { PortedStore, type StorePorts } from "../ported-store.js";
import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import type pg from "pg";
import { SteadError } from "../../errors.js";
import { toRun } from "../rows.js";
import { checkEventDeletes } from "../event-deletes.js";
import { POSTGRES_DIALECT as SQL } from "../sql/dialect.js";
import { sessionInNewRuns } from "../sql/sessions.js";
import { leaseHeld } from "../sql/claim-rule.js";
import { postgresClaims } from "./claims.js";
import { postgresRunReads } from "./run-reads.js";
import { postgresTransferRows } from "./transfer-rows.js";
import { sqlTallies } from "../sql/tallies-port.js";
import { sqlTokens } from "../sql/tokens-port.js";
import { sqlDataKeys } from "../sql/data-keys-port.js";
import { postgresIdempotencyKeys } from "./idempotency-keys.js";
import { postgresRetention } from "./retention.js";
import { postgresSnapshotsAndBlobs } from "./snapshots-blobs.js";
import { postgresDefinitions } from "./definitions.js";
import { postgresDriver, type PostgresConnection } from "./connection.js";
import * as migrationLog from "../sql/migration-log.js";
import { checkSnapshotWrites } from "../snapshot-rows.js";
import type {
  CommitOptions,
  EventWrite,
  IdempotencyWrite,
  NewRun,
  RunRow,
  RunStatus,
  Store,
  StoreInfo,
  Unit,
  UnitResult,
  WorkerAttachment,
} from "../types.js";
import { isConnectionError, isDiskFull, isRetryable, describeConnectError, redactUrl } from "./faults.js";
import { keyTaken, storageFull, type StorageCheck } from "../faults.js";
import { MIGRATION_LOCK, SESSION_LOCK_CLASS, STORE_MARKER, WAKE_CHANNEL } from "./store-names.js";
import { SCHEMA_VERSION } from "../schema/tables.js";
import { simpleStepWrite, stepCommit } from "./step-commit.js";
import { storableEvents, storableUnits } from "./storable-text.js";

export interface PostgresStoreOptions {
  /** postgres://user:password@host:port/database */
  connectionString: string;
  /** Connections in the pool. Default 10. Under 4, a worker keeps one group commit in flight instead of two. */
  poolSize?: number;
  /** Per-statement timeout in ms. Default 30 000. */
  statementTimeoutMs?: number;
  /** A session idle inside a transaction this long is ended by the server, releasing its locks. Default 10 000 ms. */
  idleInTransactionTimeoutMs?: number;
  /** Connect timeout in ms. Default 10 000. */
  connectTimeoutMs?: number;
  /** Create the schema in an empty database. Default true. */
  create?: boolean;
  /** For reading only (the CLI's read verbs): `migrate()` changes nothing and refuses a schema older than this Stead's. Implies `create: false`. */
  readonly?: boolean;
  /**
   * How long a write keeps retrying through a lost connection or a database restart before it
   * fails, in ms. Default 30 000. Reads retry for the same time.
   */
  faultRetryMs?: number;
}

type Raw = Record<string, unknown>;
type Client = pg.PoolClient;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The Postgres store: many workers on many machines share one database. Same interface and same
 * conformance suite as the SQLite store.
 *
 * Invariants:
 * - Lease times come from the database's clock (`stead_now_ms()`), never from a worker's.
 * - Claims lock candidate rows FOR UPDATE SKIP LOCKED and bump the fence in the same statement.
 * - A write whose COMMIT outcome is unknown (connection lost during COMMIT) is resolved by asking
 *   the server for its transaction's status, never by guessing; one that surely did not commit is
 *   retried, with bounded backoff, until `faultRetryMs`.
 */
export class PostgresStore extends PortedStore implements Store {
  readonly dialect = "postgres";
  readonly leaseClock = "store";
  readonly location: string;
  /** Subtransactions per commit stay under Postgres's per-transaction cache of 64. */
  readonly maxUnitsPerCommit = 48;
  /** A worker's commits side by side: two (one with a pool under four, so reads and liveness keep connections). */
  readonly commitsInFlight: number;
  private readonly pool: pg.Pool;
  private readonly config: pg.ClientConfig;
  private readonly create: boolean;
  private readonly readonly: boolean;
  private readonly faultRetryMs: number;
  private closed = false;
  /** Each port's statements, in a file of its own over the connection (connection.ts). */
  protected readonly ports: StorePorts;

  constructor(options: PostgresStoreOptions) {
    super();
    this.location = redactUrl(options.connectionString);
    this.readonly = options.readonly ?? false;
    this.create = !this.readonly && (options.create ?? true);
    this.faultRetryMs = options.faultRetryMs ?? 30_000;
    this.config = {
      connectionString: options.connectionString,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
      statement_timeout: options.statementTimeoutMs ?? 30_000,
      // A process frozen (SIGSTOP, a stalled VM) inside a transaction would keep its rows locked,
      // and SKIP LOCKED claims would pass over them until its connection died.
      idle_in_transaction_session_timeout: options.idleInTransactionTimeoutMs ?? 10_000,
      application_name: "stead",
    };
    const poolSize = options.poolSize ?? 10;
    this.pool = new (pgLib().Pool)({ ...this.config, max: poolSize });
    this.commitsInFlight = poolSize >= 4 ? 2 : 1;
    // An idle connection dropped by a server restart must not crash the process; the next
    // query gets a fresh connection.
    this.pool.on("error", () => undefined);
    // The pool listens for errors only on idle connections; a checked-out one (transaction,
    // commit) whose server goes away emits 'error' with no listener, which would kill the
    // process. Its pending and next queries fail with a connection error and are retried.
    this.pool.on("connect", (client) => client.on("error", () => undefined));
    const connection: PostgresConnection = { query: (sql, params) => this.query(sql, params), transaction: (fn) => this.transaction(fn), snapshot: (fn) => this.snapshot(fn) };
    const driver = postgresDriver(connection);
    this.ports = {
      claims: postgresClaims(connection),
      runReads: postgresRunReads(connection),
      rows: postgresTransferRows(connection),
      tallies: sqlTallies(driver),
      idempotency: postgresIdempotencyKeys(connection),
      runRetention: postgresRetention(connection),
      blobStore: postgresSnapshotsAndBlobs(connection),
      tokens: sqlTokens(driver),
      keys: sqlDataKeys(driver),
      definitions: postgresDefinitions(connection),
    };
  }

  private async connect(): Promise<Client> {
    try {
      return await this.pool.connect();
    } catch (e) {
      throw describeConnectError(e, this.location);
    }
  }

  /** Runs `fn` on a pooled connection, retrying through connection faults for up to faultRetryMs. */
  private async withRetry<T>(fn: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.faultRetryMs;
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (e) {
        if (isDiskFull(e)) throw storageFull(this.location, e);
        if (this.closed || !isRetryable(e)) throw e;
        if (Date.now() >= deadline) throw describeConnectError(e, this.location);
        await sleep(Math.min(2000, 25 * 2 ** attempt) * (0.5 + Math.random() / 2));
      }
    }
  }

  private query(sql: string, params: unknown[] = []): Promise<Raw[]> {
    return this.withRetry(async () => (await this.pool.query(sql, params)).rows as Raw[]);
  }

  /**
   * One write transaction. `fn` must only issue SQL (it may run again after a fault). Returns its
   * value once the COMMIT is known to be durable.
   */
  private async transaction<T>(fn: (c: Client) => Promise<T>, beforeCommit?: () => void): Promise<T> {
    return this.withRetry(async () => {
      const client = await this.pool.connect();
      let xid: string | undefined;
      let value: T | undefined;
      let committing = false;
      let broken = false;
      try {
        const begun = (await client.query("BEGIN; SELECT pg_current_xact_id()::text AS xid")) as unknown as pg.QueryResult[];
        xid = String((begun[1]?.rows[0] as { xid?: string } | undefined)?.xid);
        value = await fn(client);
        beforeCommit?.();
        committing = true;
        await client.query("COMMIT");
        return value;
      } catch (e) {
        broken = isConnectionError(e);
        if (!broken && !committing) await client.query("ROLLBACK").catch(() => undefined);
        // The COMMIT's reply was lost with the connection: ask the server what became of it.
        // `value` was computed inside the transaction, so it is the committed transaction's result.
        if (committing && broken && xid !== undefined && (await this.transactionStatus(xid)) === "committed") return value as T;
        throw e;
      } finally {
        client.release(broken);
      }
    });
  }

  /** Reads from one snapshot: a read-only REPEATABLE READ transaction, retried through connection faults. */
  private async snapshot<T>(fn: (c: Client) => Promise<T>): Promise<T> {
    return this.withRetry(async () => {
      const c = await this.pool.connect();
      try {
        await c.query("BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
        const value = await fn(c);
        await c.query("COMMIT");
        return value;
      } catch (e) {
        await c.query("ROLLBACK").catch(() => undefined);
        throw e;
      } finally {
        c.release();
      }
    });
  }

  /** Asks the server, on a fresh connection, what became of a transaction whose COMMIT reply was lost. */
  private async transactionStatus(xid: string): Promise<"committed" | "aborted" | "in progress" | null> {
    const deadline = Date.now() + this.faultRetryMs;
    for (let attempt = 0; ; attempt++) {
      try {
        const rows = (await this.pool.query("SELECT pg_xact_status($1::xid8) AS s", [xid])).rows as Raw[];
        const s = rows[0]?.s;
        if (s === "in progress") {
          await sleep(50);
          continue;
        }
        return s === "committed" || s === "aborted" ? s : null;
      } catch (e) {
        if (!isRetryable(e) || Date.now() >= deadline) throw e;
        await sleep(Math.min(2000, 25 * 2 ** attempt));
      }
    }
  }

  private async readVersion(client: Client): Promise<{ marker: string | undefined; version: number; empty: boolean }> {
    const tables = (await client.query("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")).rows as { table_name: string }[];
    const names = new Set(tables.map((t) => t.table_name));
    if (names.size === 0) return { marker: undefined, version: 0, empty: true };
    if (!names.has("stead_meta") || !names.has("stead_migrations")) return { marker: undefined, version: 0, empty: false };
    const marker = ((await client.query(migrationLog.STORE_MARKER)).rows[0] as { value?: string } | undefined)?.value;
    const v = (await client.query(migrationLog.LATEST_MIGRATION)).rows[0] as { v: number | null };
    return { marker, version: Number(v.v ?? 0), empty: false };
  }

  private assertReadable(info: { marker: string | undefined; version: number; empty: boolean }): void {
    if (!info.empty && info.marker !== STORE_MARKER) {
      throw new SteadError("STEAD_NOT_A_STORE", `the database at ${this.location} has tables but is not a Stead store`, {
        fix: "point STEAD_DATABASE_URL (or --store) at an empty database or a Stead store",
      });
    }
    if (info.version > SCHEMA_VERSION) {
      throw new SteadError("STEAD_STORE_TOO_NEW", `the store at ${this.location} has schema version ${info.version}, newer than this Stead's ${SCHEMA_VERSION}`, {
        fix: "upgrade stead to the version that wrote this store",
      });
    }
  }

  /** A server that goes away mid-way (a restart) is STEAD_STORE_UNREACHABLE, never a bare driver error. */
  async migrate(): Promise<void> {
    if (this.readonly) {
      const info = await this.check();
      if (info.schemaVersion < SCHEMA_VERSION) {
        throw new SteadError("STEAD_STORE_TOO_OLD", `the store at ${this.location} has schema version ${info.schemaVersion}, older than this Stead's ${SCHEMA_VERSION}: it needs a migration before it can be read`, {
          fix: "run `stead migrate` on it (as a user who may change its schema), then try again",
        });
      }
      return;
    }
    try {
      await this.migrateOnce();
    } catch (e) {
      throw isConnectionError(e) ? describeConnectError(e, this.location) : e;
    }
  }

  private async migrateOnce(): Promise<void> {
    const client = await this.connect();
    try {
      await client.query("SELECT pg_advisory_lock($1::bigint)", [MIGRATION_LOCK]);
      try {
        const info = await this.readVersion(client);
        this.assertReadable(info);
        if (info.empty) {
          if (!this.create) {
            throw new SteadError("STEAD_STORE_MISSING", `the database at ${this.location} holds no Stead store`, {
              fix: "create one with `stead migrate`, or start a run or a worker against it",
            });
          }
          await client.query(`BEGIN;
            CREATE TABLE stead_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE stead_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL);
            INSERT INTO stead_meta (key, value) VALUES ('marker', '${STORE_MARKER}');
            COMMIT;`);
        }
        // The DDL is loaded only here: opening a store for work needs none of it.
        const { MIGRATIONS } = await import("./migrations.js");
        for (const m of MIGRATIONS) {
          const done = (await client.query(SQL.text(migrationLog.MIGRATION_APPLIED), [m.version])).rowCount;
          if (done) continue;
          await client.query("BEGIN");
          try {
            await client.query(m.sql);
            await client.query(SQL.text(migrationLog.RECORD_MIGRATION), [m.version, m.name, Date.now()]);
            await client.query("COMMIT");
          } catch (e) {
            await client.query("ROLLBACK").catch(() => undefined);
            throw e;
          }
        }
      } finally {
        await client.query("SELECT pg_advisory_unlock($1::bigint)", [MIGRATION_LOCK]).catch(() => undefined);
      }
    } finally {
      client.release();
    }
  }

  async check(): Promise<StoreInfo> {
    try {
      return await this.checkOnce();
    } catch (e) {
      throw isConnectionError(e) ? describeConnectError(e, this.location) : e;
    }
  }

  private async checkOnce(): Promise<StoreInfo> {
    const client = await this.connect();
    try {
      const info = await this.readVersion(client);
      this.assertReadable(info);
      if (info.empty) {
        throw new SteadError("STEAD_STORE_MISSING", `the database at ${this.location} holds no Stead store`, {
          fix: "create one with `stead migrate`, or start a run or a worker against it",
        });
      }
      return { dialect: this.dialect, location: this.location, schemaVersion: info.version };
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }













  /**
   * A session's turn is 1 + its highest committed turn, read under a transaction-level advisory
   * lock on the session: a concurrent createRun for the same session waits for this transaction to
   * end, and its INSERT (a new statement, so a new snapshot under READ COMMITTED) then sees this
   * turn. The unique index runs_session_turn backs it up.
   */
  async createRun(run: NewRun, given: EventWrite[], idempotency?: IdempotencyWrite): Promise<RunRow> {
    const sessionId = run.sessionId ?? null;
    const events = storableEvents(given);
    return this.transaction(async (c) => {
      if (sessionId !== null) await c.query("SELECT pg_advisory_xact_lock($1::int, hashtext($2))", [SESSION_LOCK_CLASS, sessionId]);
      const inserted = await c.query(
        `INSERT INTO runs (id, definition, module, fingerprint, status, input, parent_id, parent_step_id, session_id, turn, workspace, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $10::text,
                 CASE WHEN $10::text IS NULL THEN NULL ELSE (SELECT coalesce(max(turn), 0) + 1 FROM runs WHERE session_id = $10::text) END, $11, $9, $9)
         ON CONFLICT (id) DO NOTHING RETURNING *`,
        [run.id, run.definition, run.module, run.fingerprint, run.status ?? "pending", run.input, run.parentId ?? null, run.parentStepId ?? null, run.createdAt, sessionId, run.workspace ?? null],
      );
      const row = inserted.rows[0] as Raw | undefined;
      if (!row) {
        throw new SteadError("STEAD_ID_TAKEN", `a run with id ${run.id} already exists`, { runId: run.id, fix: "choose another run id, or omit it to get a fresh one" });
      }
      // The run exists now: the journal, events and key go through the same function as every commit.
      const applied = await c.query("SELECT stead_commit($1::jsonb) AS r", [JSON.stringify([[{ runId: run.id, steps: run.journal ?? [], events, ...(idempotency ? { idempotency } : {}) }]])]);
      const [result] = parseResults((applied.rows[0] as { r?: unknown } | undefined)?.r, [[]]);
      // Thrown inside the transaction: the run's insert is rolled back with it.
      if (idempotency && result && !result.ok) throw keyTaken(idempotency.verb, idempotency.scope, idempotency.key);
      if ((run.status ?? "pending") === "pending") await c.query("SELECT pg_notify($1, '')", [WAKE_CHANNEL]);
      return toRun(row);
    });
  }

  /**
   * Group commit in one round trip: BEGIN, stead_commit_logged, COMMIT sent as one query. The
   * results are also written under a fresh token, so a COMMIT whose reply is lost is resolved by
   * reading them back once the old backend is gone (never by guessing); a batch that surely did not
   * commit is sent again.
   */
  async commit(given: Unit[], options: CommitOptions = {}): Promise<UnitResult[]> {
    if (given.length === 0) return [];
    const units = storableUnits(given);
    for (const u of units) for (const m of u) for (const r of m.newRuns ?? []) if (r.sessionId != null) throw sessionInNewRuns(r.id);
    checkSnapshotWrites(units);
    checkEventDeletes(units);
    const order = lockOrder(units);
    const sorted = order.map((i) => units[i] as Unit);
    const results = await this.commitSorted(sorted, options);
    const out = new Array<UnitResult>(units.length);
    order.forEach((i, k) => (out[i] = results[k] as UnitResult));
    return out;
  }

  private async commitSorted(units: Unit[], options: CommitOptions): Promise<UnitResult[]> {
    const step = units.length === 1 ? simpleStepWrite(units[0]) : undefined;
    // The general path's argument: the step path sends its own, smaller parameters.
    const payload = step && !options.beforeCommit ? "" : JSON.stringify(units);
    return this.withRetry(async () => {
      const token = randomUUID();
      const client = await this.pool.connect();
      const backend = (client as unknown as { processID: number | null }).processID;
      let broken = false;
      try {
        let raw: unknown;
        if (options.beforeCommit) {
          const call = `SELECT stead_commit_logged(${client.escapeLiteral(token)}, ${client.escapeLiteral(payload)}::jsonb) AS r`;
          const res = (await client.query(`BEGIN; ${call}`)) as unknown as pg.QueryResult[];
          raw = (res[1]?.rows[0] as { r?: unknown } | undefined)?.r;
          options.beforeCommit();
          await client.query("COMMIT");
        } else if (step) {
          // One statement in autocommit is its own transaction: atomic, one round trip, planned once.
          const res = await client.query(stepCommit(step, token));
          raw = (res.rows[0] as { r?: unknown } | undefined)?.r;
        } else {
          const res = await client.query({ name: "stead_commit_logged", text: "SELECT stead_commit_logged($1, $2::jsonb) AS r", values: [token, payload] });
          raw = (res.rows[0] as { r?: unknown } | undefined)?.r;
        }
        return parseResults(raw, units);
      } catch (e) {
        broken = isConnectionError(e);
        if (!broken) {
          await client.query("ROLLBACK").catch(() => undefined);
          throw e;
        }
        const logged = await this.readBackCommit(token, backend);
        if (logged !== undefined) return parseResults(logged, units);
        throw e;
      } finally {
        client.release(broken);
      }
    });
  }

  /**
   * After a connection died mid-commit: waits until its server backend is gone (so its transaction
   * has ended one way or the other), then returns the logged results if it committed.
   */
  private async readBackCommit(token: string, backend: number | null): Promise<string | undefined> {
    const deadline = Date.now() + this.faultRetryMs;
    for (let attempt = 0; ; attempt++) {
      try {
        if (backend !== null) {
          const alive = await this.pool.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [backend]);
          if (alive.rowCount) {
            if (Date.now() >= deadline) {
              // Not retryable on purpose: sending the batch again could apply it twice.
              throw new SteadError("STEAD_STORE_UNREACHABLE", `the outcome of a commit is unknown: its server backend ${backend} is still running after ${this.faultRetryMs} ms`, {
                fix: "the runs involved are resumed from their journal by the next claim; check the database's health",
              });
            }
            await sleep(20);
            continue;
          }
        }
        const rows = (await this.pool.query("SELECT results FROM stead_commits WHERE token = $1", [token])).rows as { results: string }[];
        return rows[0]?.results;
      } catch (e) {
        if (!isRetryable(e) || Date.now() >= deadline) throw e;
        await sleep(Math.min(2000, 25 * 2 ** attempt));
      }
    }
  }




  /**
   * Holds this worker's liveness lock (a session-level advisory lock keyed by its id) and listens
   * for wake-ups, on one dedicated connection. When the worker's process dies, the server closes
   * the connection and releases the lock: other workers see it gone at once.
   */
  async attachWorker(workerId: string, onWake: () => void): Promise<WorkerAttachment> {
    const client = new (pgLib().Client)(this.config);
    let resolveLost!: (e: unknown) => void;
    const lost = new Promise<unknown>((r) => (resolveLost = r));
    client.on("error", (e) => resolveLost(e));
    client.on("end", () => resolveLost(new Error("liveness connection closed")));
    client.on("notification", () => onWake());
    try {
      await client.connect();
      await client.query("SELECT pg_advisory_lock(hashtextextended($1, 0))", [workerId]);
      await client.query(`LISTEN ${WAKE_CHANNEL}`);
    } catch (e) {
      await client.end().catch(() => undefined);
      throw describeConnectError(e, this.location);
    }
    let detached = false;
    return {
      lost,
      detach: async () => {
        if (detached) return;
        detached = true;
        await client.end().catch(() => undefined);
      },
    };
  }

  /** Ends at once the leases of owners whose liveness lock is gone (their connection closed). */
  async expireGoneOwners(): Promise<string[]> {
    const rows = await this.query(
      `WITH gone AS (
         SELECT r.id, r.fence, r.lease_owner FROM runs r
         WHERE r.status = 'running' AND ${leaseHeld("r", "stead_now_ms()")}
           AND NOT EXISTS (
             SELECT 1 FROM pg_locks l
             WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
               AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
               AND l.classid = ((hashtextextended(r.lease_owner, 0) >> 32) & 4294967295)::oid
               AND l.objid = (hashtextextended(r.lease_owner, 0) & 4294967295)::oid)
         FOR UPDATE OF r SKIP LOCKED
       ), upd AS (
         UPDATE runs r SET lease_expires_at = 0, updated_at = stead_now_ms() FROM gone
         WHERE r.id = gone.id AND r.fence = gone.fence
         RETURNING r.id, r.fence, gone.lease_owner
       ), ev AS (
         INSERT INTO events (run_id, type, at, data)
         SELECT id, 'lease.expired', stead_now_ms(), json_build_object('fence', fence, 'reason', 'owner ' || lease_owner || ' is gone (its database connection closed)')::text FROM upd
         RETURNING run_id
       )
       -- Wake every worker: the one that noticed may have no free slot.
       SELECT run_id, pg_notify('${WAKE_CHANNEL}', '') FROM ev`,
    );
    return rows.map((r) => String(r.run_id));
  }












  /**
   * Postgres cannot say how much room its disk has: this writes `needBytes` (at least 2 MiB) of
   * incompressible rows into a TEMP table, on a connection of its own whose temp buffers are the
   * smallest Postgres allows (800 kB), so the rows must reach the disk and a full one fails with
   * disk_full. A TEMP table needs no CREATE privilege (only TEMP, which every role has by default)
   * and leaves nothing behind: it goes with the connection.
   */
  async checkStorage(needBytes: number): Promise<StorageCheck> {
    // The reserve must fit again too, or the next full disk would find none.
    const [reserve] = await this.query("SELECT to_regclass('stead_reserve') IS NOT NULL AS present");
    const bytes = Math.max(2 * 1024 * 1024, needBytes + (reserve?.present ? 0 : RESERVE_BYTES));
    const rows = Math.ceil(bytes / 100);
    return this.withRetry(async () => {
      const client = new (pgLib().Client)(this.config);
      client.on("error", () => undefined);
      try {
        await client.connect();
        await client.query("SET temp_buffers = '800kB'");
        await client.query("CREATE TEMP TABLE stead_storage_probe (d text)");
        await client.query("INSERT INTO stead_storage_probe SELECT md5(g::text) || md5((g + 1)::text) FROM generate_series(1, $1::int) AS g", [rows]);
        return { ok: true, freeBytes: null, needBytes: bytes, detail: `a probe write of ${bytes} bytes succeeded` };
      } catch (e) {
        if (isDiskFull(e)) return { ok: false, freeBytes: null, needBytes: bytes, detail: `a probe write of ${bytes} bytes failed: ${e instanceof Error ? e.message : String(e)}` };
        throw e;
      } finally {
        await client.end().catch(() => undefined);
      }
    });
  }

  /**
   * The reserve is a table of RESERVE_BYTES kept uncompressed (`stead_reserve`, outside the
   * schema: export and import ignore it). Dropping a table works on a full disk and gives its
   * files back at once, where TRUNCATE or DELETE would need room first.
   */
  async releaseReserve(): Promise<boolean> {
    const [r] = await this.query("SELECT to_regclass('stead_reserve') IS NOT NULL AS present");
    if (!r?.present) return false;
    await this.query("DROP TABLE IF EXISTS stead_reserve");
    return true;
  }

  async restoreReserve(): Promise<void> {
    const [r] = await this.query("SELECT to_regclass('stead_reserve') IS NOT NULL AS present");
    if (r?.present) return;
    try {
      await this.transaction(async (c) => {
        await c.query("CREATE TABLE IF NOT EXISTS stead_reserve (d text)");
        await c.query("ALTER TABLE stead_reserve ALTER COLUMN d SET STORAGE EXTERNAL");
        await c.query("LOCK TABLE stead_reserve IN EXCLUSIVE MODE");
        await c.query("INSERT INTO stead_reserve SELECT repeat('r', $1::int) WHERE NOT EXISTS (SELECT 1 FROM stead_reserve)", [RESERVE_BYTES]);
      });
    } catch (e) {
      // No room for it (it is tried again after the next recovery), another worker made it first,
      // or this role may not create tables (then there is no reserve, and holds need room of their own).
      const code = (e as { code?: unknown }).code;
      if (code === "STEAD_STORAGE_FULL" || code === "23505" || code === "42501") return;
      throw e;
    }
  }



}


/** Room kept aside for a full store's bookkeeping (see releaseReserve). */
const RESERVE_BYTES = 1024 * 1024;

/**
 * The order a batch's units are applied in: by their first run's id, stable, so two batches that
 * lock the same runs take their first row locks in one order and cannot deadlock over them (each
 * unit locks its run row first and holds it to COMMIT). Units with the same first run keep their
 * relative order; a unit's other runs (a parent's row a child's end touches) are outside this
 * order, and a deadlock there is a conflict, retried. A batch in which a unit writes a run another
 * unit creates keeps the order it was given.
 */
function lockOrder(units: Unit[]): number[] {
  const key = (i: number) => units[i]?.[0]?.runId ?? "";
  const creator = new Map<string, number>();
  units.forEach((u, i) => u.forEach((m) => m.newRuns?.forEach((r) => creator.set(r.id, i))));
  const dependent = units.some((u, i) => u.some((m) => (creator.get(m.runId) ?? i) !== i));
  if (dependent) return units.map((_, i) => i);
  return units.map((_, i) => i).sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a - b));
}

function parseResults(raw: unknown, units: Unit[]): UnitResult[] {
  const list = (typeof raw === "string" ? JSON.parse(raw) : raw) as { ok: boolean; pauseRequested?: boolean; reason?: string; runId?: string; status?: string }[];
  return units.map((u, i) => {
    const r = list[i];
    if (!r) return { ok: false, reason: "missing", runId: u[0]?.runId ?? "" };
    if (r.ok) return { ok: true, pauseRequested: r.pauseRequested === true };
    return {
      ok: false,
      reason: (r.reason ?? "missing") as Extract<UnitResult, { ok: false }>["reason"],
      runId: r.runId ?? u[0]?.runId ?? "",
      ...(r.status ? { status: r.status as RunStatus } : {}),
    };
  });
}

export function openPostgresStore(options: PostgresStoreOptions): PostgresStore {
  return new PostgresStore(options);
}

let pgLoaded: typeof pg | undefined;

/** The driver, loaded when a Postgres store is opened: an SQLite-only process never pays its import. */
function pgLib(): typeof pg {
  pgLoaded ??= createRequire(__filename)("pg") as typeof pg;
  return pgLoaded;
}
