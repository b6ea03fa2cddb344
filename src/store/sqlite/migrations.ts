/**
 * Numbered, add-only migrations. Never edit a released migration: add the next number (see
 * scripts/freeze-migrations.ts).
 * Each migration runs in one transaction together with its row in `stead_migrations`.
 */
import { ddlSince } from "../schema/ddl.js";
import { DATA_KEYS_VERSION, PAYLOAD_FIELDS_VERSION, RETURNED_REFUSALS_VERSION } from "../schema/tables.js";
import type { Migration } from "../sql/migration-log.js";
import { RELEASED_MIGRATIONS } from "./released-migrations.js";

export type { Migration };

/**
 * Released migrations run the literal text they were released with (released-migrations.ts);
 * those after the last release are rendered from living code until they are frozen in turn.
 */
export const MIGRATIONS: readonly Migration[] = [
  ...RELEASED_MIGRATIONS,
  { version: DATA_KEYS_VERSION, name: "an encrypted store's data keys, wrapped", sql: ddlSince("sqlite", DATA_KEYS_VERSION) },
  {
    version: RETURNED_REFUSALS_VERSION,
    name: "nothing in SQLite: Postgres's refusals returned, not raised",
    sql: `
      -- SQLite's commitTransaction already opens a savepoint only for a unit refused after it wrote.
    `,
  },
  { version: PAYLOAD_FIELDS_VERSION, name: "what Stead says about a payload, beside it: output references, a wait's request kind", sql: ddlSince("sqlite", PAYLOAD_FIELDS_VERSION) },
];

export const LATEST_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);

/** Written into `stead_meta` so a foreign SQLite file is never mistaken for a Stead store. */
export const STORE_MARKER = "stead-store";
