/**
 * SQLite's released migrations (1 to 10), frozen as the literal text each ran when it was
 * released (scripts/freeze-migrations.ts wrote this file). Never edit it: a store migrated by
 * that release ran exactly this; test/store.migrations-frozen.test.ts pins each one's digest.
 */
import type { Migration } from "../sql/migration-log.js";

export const RELEASED_MIGRATIONS: readonly Migration[] = [
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
    sql: `
      -- SQLite applies the plan in code (apply-mutation.ts): version 6 has nothing for it to change.
    `,
  },
  {
    version: 7,
    name: "access tokens, stored hashed",
    sql: `CREATE TABLE tokens (
  id TEXT NOT NULL,
  name TEXT NOT NULL,
  role TEXT NOT NULL,
  hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  created_by TEXT,
  revoked_at INTEGER,
  revoked_by TEXT,
  last_used_at INTEGER,
  PRIMARY KEY (id)
);
CREATE UNIQUE INDEX tokens_hash ON tokens (hash);
CREATE UNIQUE INDEX tokens_active_name ON tokens (name) WHERE revoked_at IS NULL;`,
  },
  {
    version: 8,
    name: "nothing in SQLite: the transaction that wrote each event, in Postgres",
    sql: `
      -- One writer at a time: an event's seq is already its place in commit order (sqlite/event-stream.ts).
    `,
  },
  {
    version: 9,
    name: "run listing: an index per filter and sort key",
    sql: `CREATE INDEX runs_created ON runs (created_at, id);
CREATE INDEX runs_updated ON runs (updated_at, id);
CREATE INDEX runs_status_created ON runs (status, created_at, id);
CREATE INDEX runs_status_updated ON runs (status, updated_at, id);
CREATE INDEX runs_definition_created ON runs (definition, created_at, id);
CREATE INDEX runs_definition_updated ON runs (definition, updated_at, id);
CREATE INDEX runs_session_created ON runs (session_id, created_at, id) WHERE session_id IS NOT NULL;
CREATE INDEX runs_session_updated ON runs (session_id, updated_at, id) WHERE session_id IS NOT NULL;
CREATE INDEX runs_parent_created ON runs (parent_id, created_at, id) WHERE parent_id IS NOT NULL;
CREATE INDEX runs_parent_updated ON runs (parent_id, updated_at, id) WHERE parent_id IS NOT NULL;`,
  },
  {
    version: 10,
    name: "definitions workers announce, and which workers serve them",
    sql: `CREATE TABLE definitions (
  name TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  kind TEXT NOT NULL,
  module TEXT,
  input_schema TEXT,
  first_announced_at INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  PRIMARY KEY (name, fingerprint)
);
CREATE TABLE announcements (
  worker_id TEXT NOT NULL,
  name TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  host TEXT NOT NULL,
  pid INTEGER NOT NULL,
  announced_at INTEGER NOT NULL,
  seen_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (worker_id, name)
);
CREATE INDEX announcements_name ON announcements (name, fingerprint);
CREATE INDEX announcements_expiry ON announcements (expires_at);`,
  },
];
