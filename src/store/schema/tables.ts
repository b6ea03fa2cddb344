/**
 * The current schema of every Stead store, once. Each dialect's DDL for a new migration
 * (`ddl.ts`), the transfer column lists (`transfer/tables.ts`) and the row mappers (`rows.ts`)
 * come from it, and a test checks that each store's live schema, after its migrations, is exactly
 * this (test/store.schema.test.ts).
 *
 * Released migrations (sqlite/migrations.ts, postgres/migrations.ts) are frozen text and stay as
 * they were; what a new one adds is written here first, marked `since` its version, and the
 * migration renders it with `ddlSince`. Columns are listed in the order the migrations created
 * them: that order is a dump's column order.
 */
import { TERMINAL_SQL } from "../sql/sessions.js";
import { added, bookkeeping, col, type TableSpec } from "./model.js";

/**
 * The schema version this description is: every dialect's LATEST_VERSION (a test checks). A
 * version may change no table (6 replaced Postgres's stead_apply_mutation only): nothing here is
 * marked with it, and each dialect still has a migration of that number.
 */
export const SCHEMA_VERSION = 13;

/** The version that added access tokens (the `tokens` table); both dialects' migrations read it. */
export const TOKENS_VERSION = 7;

/** The version that records each event's transaction in Postgres (events.xid), for the event stream. */
export const EVENT_XIDS_VERSION = 8;

/** The version that added the run listing's indexes (sql/run-listing.ts walks them). */
export const RUN_LISTING_VERSION = 9;

/** The version that added the definition catalog and workers' announcements (see below). */
export const DEFINITIONS_VERSION = 10;

/** The version that added the data keys of an encrypted store (`data_keys`, see encryption/). */
export const DATA_KEYS_VERSION = 11;

/**
 * The version from which Postgres's stead_apply_mutation returns a refusal rather than raising it,
 * so stead_commit opens a subtransaction only for a unit that can be refused after it has written
 * (postgres/commit-function.ts). No table changes.
 */
export const RETURNED_REFUSALS_VERSION = 12;

/**
 * The version that moved what Stead itself says about a payload out of the payload: a run's
 * output references (`runs.output_refs`) and the kind of a wait's request (`waits.request_kind`).
 * Rows written before it say the same in-band (`$steadRef`, a request's shape): read for ever.
 */
export const PAYLOAD_FIELDS_VERSION = 13;

const table = <const T extends TableSpec>(t: T): T => t;

export const TABLES = {
  // Bookkeeping, created before migration 1 (never exported).
  stead_meta: table({ since: 0, key: ["key"], columns: [col("key", "text"), col("value", "text")] }),
  stead_migrations: table({ since: 0, key: ["version"], columns: [col("version", "int"), col("name", "text"), col("applied_at", "bigint")] }),

  runs: table({
    key: ["id"],
    columns: [
      col("id", "text"),
      col("definition", "text"),
      col("module", "text", true),
      col("fingerprint", "text", true),
      col("status", "text"),
      col("input", "text"),
      col("output", "text", true),
      col("error", "text", true),
      col("parent_id", "text", true),
      col("parent_step_id", "text", true),
      col("fence", "bigint", false, { default: 0 }),
      col("lease_owner", "text", true),
      col("lease_expires_at", "bigint", true),
      col("owner_host", "text", true),
      col("owner_pid", "int", true),
      col("owner_start", "text", true),
      col("lost_claims", "int", false, { default: 0 }),
      col("pause_requested", "bool", false, { default: false }),
      col("created_at", "bigint"),
      col("updated_at", "bigint"),
      added(2, "session_id", "text"),
      added(2, "turn", "int"),
      added(3, "workspace", "text"),
      added(13, "output_refs", "text"),
    ],
    indexes: [
      { name: "runs_claimable", columns: ["status", "definition", "created_at"] },
      { name: "runs_parent", columns: ["parent_id"], where: "parent_id IS NOT NULL" },
      // One run per turn: createRun's turn numbering relies on it as a last guard.
      { name: "runs_session_turn", columns: ["session_id", "turn"], unique: true, where: "session_id IS NOT NULL", since: 2 },
      // The claim's "an earlier turn is still open" probe (sessions-sql.ts spells the same list).
      { name: "runs_session_open", columns: ["session_id", "turn"], where: `session_id IS NOT NULL AND status NOT IN ${TERMINAL_SQL}`, since: 2 },
      // The run listing (sql/run-listing.ts): one index per filter and sort key, ending in id, the
      // tie-breaker, so that a page is one walk in its order (both directions) stopped after it.
      // Hazard: each is written at every change of a run's state (no step commit touches the row).
      { name: "runs_created", columns: ["created_at", "id"], since: RUN_LISTING_VERSION },
      { name: "runs_updated", columns: ["updated_at", "id"], since: RUN_LISTING_VERSION },
      { name: "runs_status_created", columns: ["status", "created_at", "id"], since: RUN_LISTING_VERSION },
      { name: "runs_status_updated", columns: ["status", "updated_at", "id"], since: RUN_LISTING_VERSION },
      { name: "runs_definition_created", columns: ["definition", "created_at", "id"], since: RUN_LISTING_VERSION },
      { name: "runs_definition_updated", columns: ["definition", "updated_at", "id"], since: RUN_LISTING_VERSION },
      { name: "runs_session_created", columns: ["session_id", "created_at", "id"], where: "session_id IS NOT NULL", since: RUN_LISTING_VERSION },
      { name: "runs_session_updated", columns: ["session_id", "updated_at", "id"], where: "session_id IS NOT NULL", since: RUN_LISTING_VERSION },
      { name: "runs_parent_created", columns: ["parent_id", "created_at", "id"], where: "parent_id IS NOT NULL", since: RUN_LISTING_VERSION },
      { name: "runs_parent_updated", columns: ["parent_id", "updated_at", "id"], where: "parent_id IS NOT NULL", since: RUN_LISTING_VERSION },
      // An id prefix by byte order whatever the database's collation (SQLite's key index serves it there).
      { name: "runs_id_pattern", columns: ["id text_pattern_ops"], only: "postgres", since: RUN_LISTING_VERSION },
    ],
  }),

  steps: table({
    key: ["run_id", "seq"],
    columns: [
      col("run_id", "text"),
      col("seq", "int"),
      col("step_id", "text"),
      col("kind", "text"),
      col("status", "text"),
      col("attempt", "int"),
      col("output", "text", true),
      col("error", "text", true),
      col("started_at", "bigint"),
      col("completed_at", "bigint", true),
      added(4, "checkpoint", "text"),
    ],
  }),

  waits: table({
    key: ["run_id", "name"],
    columns: [
      col("run_id", "text"),
      col("name", "text"),
      col("kind", "text"),
      col("status", "text"),
      col("seq", "int"),
      col("request", "text", true),
      col("wake_at", "bigint", true),
      col("result", "text", true),
      col("created_at", "bigint"),
      col("resolved_at", "bigint", true),
      col("resolved_by", "text", true),
      added(13, "request_kind", "text"),
    ],
    // The sweeper's due waits: timers and quota parks.
    indexes: [{ name: "waits_wake", columns: ["wake_at"], where: "status = 'open' AND kind IN ('timer', 'quota')", since: 2 }],
  }),

  holds: table({
    key: ["id"],
    serial: { column: "id", autoincrement: true },
    columns: [
      col("id", "bigint"),
      col("run_id", "text"),
      col("kind", "text"),
      col("step_id", "text", true),
      col("seq", "int", true),
      col("reason", "text"),
      col("details", "text"),
      col("status", "text"),
      col("choice", "text", true),
      col("created_at", "bigint"),
      col("released_at", "bigint", true),
      col("released_by", "text", true),
    ],
    indexes: [{ name: "holds_run", columns: ["run_id", "status"] }],
  }),

  events: table({
    key: ["seq"],
    // No AUTOINCREMENT: it would write sqlite_sequence in every step's transaction. Hazard: SQLite
    // then numbers a new event max + 1, so a write that deletes events inserts its own first.
    serial: { column: "seq" },
    columns: [
      col("seq", "bigint"),
      col("run_id", "text"),
      col("type", "text"),
      col("at", "bigint"),
      col("data", "text"),
      // Postgres: the top-level transaction that wrote the row, the event stream's position
      // (postgres/event-stream.ts). Stable, so one statement writes one value, and a migration
      // gives every row already there its own transaction's id, complete before any position is taken.
      bookkeeping(EVENT_XIDS_VERSION, "postgres", "xid", "bigint", "(pg_current_xact_id()::text)::bigint"),
    ],
    indexes: [
      { name: "events_run", columns: ["run_id", "seq"] },
      // The stream's two probes: the rows of transactions in progress at the last read, by id, and
      // those of every transaction that began after it, as a range.
      { name: "events_xid", columns: ["xid"], only: "postgres", since: EVENT_XIDS_VERSION },
      // COMPACTABLE_EVENTS (types.ts): live model text, deleted once its step is journaled, so only
      // in-flight and cut-off text is in it. Another compactable type needs a migration of this index.
      { name: "events_compactable", columns: ["run_id", "seq"], where: "type = 'model.delta'", since: 5 },
    ],
  }),

  // Content-addressed: a hash names one content forever; data is the last column so a row's small
  // fields come before its overflow pages.
  blobs: table({
    since: 3,
    key: ["hash"],
    columns: [col("hash", "text"), col("size", "bigint"), col("touched_at", "bigint"), col("data", "bytes", false, { uncompressed: true })],
  }),

  snapshots: table({
    since: 3,
    key: ["id"],
    serial: { column: "id" },
    columns: [
      col("id", "bigint"),
      col("run_id", "text"),
      col("seq", "int"),
      col("step_id", "text", true),
      col("source", "text"),
      col("root", "text"),
      col("files", "int"),
      col("bytes", "bigint"),
      col("files_changed", "int"),
      col("new_bytes", "bigint"),
      col("notes", "text", true),
      col("checkpoint", "text", true),
      col("created_at", "bigint"),
    ],
    indexes: [
      { name: "snapshots_run", columns: ["run_id", "seq"] },
      // One start/step snapshot per journal position; settle snapshots accumulate.
      { name: "snapshots_step", columns: ["run_id", "seq"], unique: true, where: "source <> 'settle'" },
    ],
  }),

  idempotency_keys: table({
    since: 5,
    key: ["verb", "scope", "key"],
    columns: [
      col("verb", "text"),
      col("scope", "text"),
      col("key", "text"),
      col("digest", "text"),
      col("summary", "text"),
      col("result", "text"),
      col("actor", "text", true),
      col("created_at", "bigint"),
      col("expires_at", "bigint"),
    ],
    indexes: [{ name: "idempotency_expiry", columns: ["expires_at"] }],
  }),

  // Access tokens: the secret is never stored, only its SHA-256 (engine/access/token-secret.ts).
  tokens: table({
    since: TOKENS_VERSION,
    key: ["id"],
    columns: [
      col("id", "text"),
      col("name", "text"),
      col("role", "text"),
      col("hash", "text"),
      col("created_at", "bigint"),
      col("created_by", "text", true),
      col("revoked_at", "bigint", true),
      col("revoked_by", "text", true),
      col("last_used_at", "bigint", true),
    ],
    indexes: [
      // A presented token is found by its hash; two tokens never share one.
      { name: "tokens_hash", columns: ["hash"], unique: true },
      // A name names one token that is not revoked; a revoked token's name may be taken again.
      { name: "tokens_active_name", columns: ["name"], unique: true, where: "revoked_at IS NULL" },
    ],
  }),

  // The catalog of definitions workers have announced: one row per name and fingerprint, kept when
  // its workers stop (a start by name still checks its input), refreshed while any serves it.
  // Live state, not user data: never exported (transfer/tables.ts says why).
  definitions: table({
    since: DEFINITIONS_VERSION,
    key: ["name", "fingerprint"],
    columns: [
      col("name", "text"),
      col("fingerprint", "text"),
      col("kind", "text"),
      col("module", "text", true),
      col("input_schema", "text", true),
      col("first_announced_at", "bigint"),
      col("last_seen_at", "bigint"),
    ],
  }),

  // Which worker serves which definition now: written when a worker starts, refreshed at its
  // heartbeat, deleted when it stops gracefully. A row past expires_at is a worker that stopped
  // refreshing (killed, frozen, cut off): it counts as not alive, and is pruned later.
  announcements: table({
    since: DEFINITIONS_VERSION,
    key: ["worker_id", "name"],
    columns: [
      col("worker_id", "text"),
      col("name", "text"),
      col("fingerprint", "text"),
      col("host", "text"),
      col("pid", "int"),
      col("announced_at", "bigint"),
      col("seen_at", "bigint"),
      col("expires_at", "bigint"),
    ],
    indexes: [
      { name: "announcements_name", columns: ["name", "fingerprint"] },
      { name: "announcements_expiry", columns: ["expires_at"] },
    ],
  }),

  // An encrypted store's keys, each wrapped by a key-encryption key the store never holds
  // (encryption/keyring.ts). A store with any row here is encrypted: it never opens without its key.
  // `id` "mac" is the key blob addresses are keyed with; every other id is a data key, the newest
  // of which encrypts new values. Never exported (transfer/tables.ts says why).
  data_keys: table({
    since: DATA_KEYS_VERSION,
    key: ["id"],
    columns: [col("id", "text"), col("kek_id", "text"), col("wrapped", "text"), col("created_at", "bigint")],
  }),

  // Each group commit's results under a token the writer chose (a COMMIT whose reply was lost is read back).
  stead_commits: table({ only: "postgres", key: ["token"], columns: [col("token", "text"), col("results", "text"), col("at", "bigint")] }),
} as const;

export type TableName = keyof typeof TABLES;

/** The table's description; throws on a name the schema does not have (names reach SQL text). */
export function tableSpec(name: string): TableSpec {
  if (!Object.hasOwn(TABLES, name)) throw new Error(`the schema has no table ${JSON.stringify(name)}`);
  return TABLES[name as TableName];
}

/** The predicate of index `name` of `table`, for a query that must use that partial index. */
export function indexPredicate(table: TableName, name: string): string {
  const where = (tableSpec(table).indexes ?? []).find((i) => i.name === name)?.where;
  if (where === undefined) throw new Error(`${table} has no partial index ${name}`);
  return where;
}
