/**
 * The names a Postgres store is known by, apart from its migrations (migrations.ts, loaded only by
 * `migrate`): what opening, notifying and listening need, without the schema's DDL.
 */

/** Written into `stead_meta` so a foreign database is never mistaken for a Stead store. */
export const STORE_MARKER = "stead-store";

/** pg_advisory_lock key under which migrations run ('STEAD' in ASCII). */
export const MIGRATION_LOCK = "357895800644";

/** The channel workers LISTEN on: a run became runnable. Migrations 1 and 6 name it in their PL/pgSQL as well. */
export const WAKE_CHANNEL = "stead_wake";

/**
 * Class key of the per-session advisory locks (the two-key form, 'SESS' in ASCII): apart from the
 * one-key locks (migrations, worker presence) that expireGoneOwners looks for.
 */
export const SESSION_LOCK_CLASS = 0x53455353;
