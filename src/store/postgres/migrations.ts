/**
 * Numbered, add-only migrations for the Postgres store; the same versions as the SQLite store's,
 * table for table. Never edit a released migration: add the next number. Each runs in one
 * transaction with its `stead_migrations` row, under an advisory lock so many workers may start at once.
 * Released ones are frozen as literal text (released-migrations.ts, scripts/freeze-migrations.ts).
 *
 * Mutations are applied by `stead_commit(units jsonb)`: one round trip per group commit, a failed
 * precondition refusing its unit alone (from migration 12 without a subtransaction unless the unit
 * needs one: commit-function.ts), every precondition checked against the run row locked FOR UPDATE
 * (a concurrent claim waits for this commit).
 */
import { ddlSince } from "../schema/ddl.js";
import { DATA_KEYS_VERSION, PAYLOAD_FIELDS_VERSION, RETURNED_REFUSALS_VERSION } from "../schema/tables.js";
import { COMMIT_FUNCTIONS_V12 } from "./commit-function.js";
import { applyMutationFunctionSql } from "./mutation-function.js";
import type { Migration } from "../sql/migration-log.js";
import { RELEASED_MIGRATIONS } from "./released-migrations.js";

export type { Migration };

/**
 * Released migrations run the literal text they were released with (released-migrations.ts);
 * those after the last release are rendered from living code until they are frozen in turn.
 */
export const MIGRATIONS: readonly Migration[] = [
  ...RELEASED_MIGRATIONS,
  { version: DATA_KEYS_VERSION, name: "an encrypted store's data keys, wrapped", sql: ddlSince("postgres", DATA_KEYS_VERSION) },
  // stead_apply_mutation's new contract and the stead_commit that relies on it land in one
  // transaction: no commit ever runs the one against the other's old contract.
  {
    version: RETURNED_REFUSALS_VERSION,
    name: "refusals returned, not raised: a subtransaction only for a unit refused after it wrote",
    sql: `\n  ${applyMutationFunctionSql(RETURNED_REFUSALS_VERSION)}\n${COMMIT_FUNCTIONS_V12}`,
  },
  // The columns and the stead_apply_mutation that writes them, in one transaction.
  {
    version: PAYLOAD_FIELDS_VERSION,
    name: "what Stead says about a payload, beside it: output references, a wait's request kind",
    sql: `${ddlSince("postgres", PAYLOAD_FIELDS_VERSION)}\n  ${applyMutationFunctionSql(PAYLOAD_FIELDS_VERSION)}`,
  },
];

export const LATEST_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);

export { MIGRATION_LOCK, STORE_MARKER, WAKE_CHANNEL } from "./store-names.js";
