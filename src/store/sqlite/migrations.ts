/**
 * Numbered, add-only migrations. Never edit a released migration: add the next number.
 * Each migration runs in one transaction together with its row in `stead_migrations`.
 */
import { ddlSince } from "../schema/ddl.js";
import { DATA_KEYS_VERSION, DEFINITIONS_VERSION, EVENT_XIDS_VERSION, RETURNED_REFUSALS_VERSION, RUN_LISTING_VERSION, TOKENS_VERSION } from "../schema/tables.js";

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "core: runs, steps, waits, holds, events",
    sql: `
      CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        definition TEXT NOT NULL,
        module TEXT,
        fingerprint TEXT,
        status TEXT NOT NULL,
        input TEXT NOT NULL,
        output TEXT,
        error TEXT,
        parent_id TEXT,
        parent_step_id TEXT,
        fence INTEGER NOT NULL DEFAULT 0,
        lease_owner TEXT,
        lease_expires_at INTEGER,
        owner_host TEXT,
        owner_pid INTEGER,
        owner_start TEXT,
        lost_claims INTEGER NOT NULL DEFAULT 0,
        pause_requested INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX runs_claimable ON runs (status, definition, created_at);
      CREATE INDEX runs_parent ON runs (parent_id) WHERE parent_id IS NOT NULL;

      -- A rowid table: about 1.4 KB on disk per 1 KB step, against 4.7 KB WITHOUT ROWID.
      CREATE TABLE steps (
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        step_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        output TEXT,
        error TEXT,
        started_at INTEGER NOT NULL,
        completed_at INTEGER,
        PRIMARY KEY (run_id, seq)
      );

      CREATE TABLE waits (
        run_id TEXT NOT NULL,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        status TEXT NOT NULL,
        seq INTEGER NOT NULL,
        request TEXT,
        wake_at INTEGER,
        result TEXT,
        created_at INTEGER NOT NULL,
        resolved_at INTEGER,
        resolved_by TEXT,
        PRIMARY KEY (run_id, name)
      );
      CREATE INDEX waits_due ON waits (wake_at) WHERE status = 'open' AND kind = 'timer';

      CREATE TABLE holds (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        step_id TEXT,
        seq INTEGER,
        reason TEXT NOT NULL,
        details TEXT NOT NULL,
        status TEXT NOT NULL,
        choice TEXT,
        created_at INTEGER NOT NULL,
        released_at INTEGER,
        released_by TEXT
      );
      CREATE INDEX holds_run ON holds (run_id, status);

      -- No AUTOINCREMENT: rows are never deleted, so rowids only grow anyway, and AUTOINCREMENT
      -- would write sqlite_sequence in every step's transaction.
      CREATE TABLE events (
        seq INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL,
        type TEXT NOT NULL,
        at INTEGER NOT NULL,
        data TEXT NOT NULL
      );
      CREATE INDEX events_run ON events (run_id, seq);
    `,
  },
  {
    version: 2,
    name: "sessions and turns; quota waits",
    sql: `
      ALTER TABLE runs ADD COLUMN session_id TEXT;
      ALTER TABLE runs ADD COLUMN turn INTEGER;
      -- One run per turn: createRun's turn assignment relies on it as a last guard.
      CREATE UNIQUE INDEX runs_session_turn ON runs (session_id, turn) WHERE session_id IS NOT NULL;
      -- The claim's "an earlier turn is still open" probe; its predicate must stay word for word
      -- the one in sessions-sql.ts (TERMINAL_SQL), or queries stop using it.
      CREATE INDEX runs_session_open ON runs (session_id, turn)
        WHERE session_id IS NOT NULL AND status NOT IN ('completed', 'failed', 'cancelled');
      -- The sweeper's due waits: timers and quota parks.
      CREATE INDEX waits_wake ON waits (wake_at) WHERE status = 'open' AND kind IN ('timer', 'quota');
      DROP INDEX waits_due;
    `,
  },
  {
    version: 3,
    name: "workspaces: snapshots and content-addressed blobs",
    sql: `
      ALTER TABLE runs ADD COLUMN workspace TEXT;

      -- Content-addressed: hash (SHA-256 of the uncompressed bytes) names one content forever, so
      -- writers insert if absent and never update data. touched_at (store clock) spares a blob from
      -- gc while a capture that relies on it has not committed its snapshot; data is the last
      -- column so the row's small fields come before its overflow pages.
      CREATE TABLE blobs (
        hash TEXT PRIMARY KEY,
        size INTEGER NOT NULL,
        touched_at INTEGER NOT NULL,
        data BLOB NOT NULL
      );

      CREATE TABLE snapshots (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        step_id TEXT,
        source TEXT NOT NULL,
        root TEXT NOT NULL,
        files INTEGER NOT NULL,
        bytes INTEGER NOT NULL,
        files_changed INTEGER NOT NULL,
        new_bytes INTEGER NOT NULL,
        notes TEXT,
        checkpoint TEXT,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX snapshots_run ON snapshots (run_id, seq);
      -- One start/step snapshot per journal position; settle snapshots accumulate.
      CREATE UNIQUE INDEX snapshots_step ON snapshots (run_id, seq) WHERE source <> 'settle';
    `,
  },
  {
    version: 4,
    name: "checkpoint metadata beside journal steps",
    sql: `
      ALTER TABLE steps ADD COLUMN checkpoint TEXT;
    `,
  },
  {
    version: 5,
    name: "idempotency keys of control commands; compactable live events",
    sql: `
      -- One row per (verb, scope, key): a repeated command finds its first result here.
      CREATE TABLE idempotency_keys (
        verb TEXT NOT NULL,
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        digest TEXT NOT NULL,
        summary TEXT NOT NULL,
        result TEXT NOT NULL,
        actor TEXT,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (verb, scope, key)
      );
      CREATE INDEX idempotency_expiry ON idempotency_keys (expires_at);
      -- Live model text is deleted once its step is journaled (Mutation.deleteEvents): only the
      -- in-flight and cut-off ones are ever in this index.
      CREATE INDEX events_compactable ON events (run_id, seq) WHERE type = 'model.delta';
    `,
  },
  {
    version: 6,
    name: "nothing in SQLite: Postgres's stead_apply_mutation rendered from the plan",
    // A store's version means the same in both dialects (a dump says which it holds), so a version
    // that changes one dialect's functions only is a migration that changes nothing in the other.
    sql: `
      -- SQLite applies the plan in code (apply-mutation.ts): version 6 has nothing for it to change.
    `,
  },
  // Rendered from the schema description (schema/tables.ts), like every migration from now on.
  { version: TOKENS_VERSION, name: "access tokens, stored hashed", sql: ddlSince("sqlite", TOKENS_VERSION) },
  {
    version: EVENT_XIDS_VERSION,
    name: "nothing in SQLite: the transaction that wrote each event, in Postgres",
    sql: `
      -- One writer at a time: an event's seq is already its place in commit order (sqlite/event-stream.ts).
    `,
  },
  { version: RUN_LISTING_VERSION, name: "run listing: an index per filter and sort key", sql: ddlSince("sqlite", RUN_LISTING_VERSION) },
  {
    version: DEFINITIONS_VERSION,
    name: "definitions workers announce, and which workers serve them",
    sql: ddlSince("sqlite", DEFINITIONS_VERSION),
  },
  { version: DATA_KEYS_VERSION, name: "an encrypted store's data keys, wrapped", sql: ddlSince("sqlite", DATA_KEYS_VERSION) },
  {
    version: RETURNED_REFUSALS_VERSION,
    name: "nothing in SQLite: Postgres's refusals returned, not raised",
    sql: `
      -- SQLite's commitTransaction already opens a savepoint only for a unit refused after it wrote.
    `,
  },
];

export const LATEST_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);

/** Written into `stead_meta` so a foreign SQLite file is never mistaken for a Stead store. */
export const STORE_MARKER = "stead-store";
