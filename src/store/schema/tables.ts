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
import { TERMINAL_SQL } from "../sessions-sql.js";
import { added, col, type TableSpec } from "./model.js";

/** The schema version this description is: every dialect's LATEST_VERSION (a test checks). */
export const SCHEMA_VERSION = 5;

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
    ],
    indexes: [
      { name: "runs_claimable", columns: ["status", "definition", "created_at"] },
      { name: "runs_parent", columns: ["parent_id"], where: "parent_id IS NOT NULL" },
      // One run per turn: createRun's turn numbering relies on it as a last guard.
      { name: "runs_session_turn", columns: ["session_id", "turn"], unique: true, where: "session_id IS NOT NULL", since: 2 },
      // The claim's "an earlier turn is still open" probe (sessions-sql.ts spells the same list).
      { name: "runs_session_open", columns: ["session_id", "turn"], where: `session_id IS NOT NULL AND status NOT IN ${TERMINAL_SQL}`, since: 2 },
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
    columns: [col("seq", "bigint"), col("run_id", "text"), col("type", "text"), col("at", "bigint"), col("data", "text")],
    indexes: [
      { name: "events_run", columns: ["run_id", "seq"] },
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
