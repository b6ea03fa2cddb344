/**
 * A Stead on each real store (an SQLite file, a fresh Postgres database), and reads of its rows
 * straight from the database, not through Stead: for tests that assert what was written.
 */
import { existsSync, readFileSync } from "node:fs";
import Database from "better-sqlite3";
import { createStead, type Stead, type SteadOptions } from "../../src/index.js";
import { withClient } from "../setup/databases.js";
import { freshMigratedDatabase, type TestDatabase } from "../setup/postgres.js";
import { tempStorePath } from "./temp-store.js";

export type StoreKind = "sqlite" | "postgres";
const ALL_KINDS: readonly StoreKind[] = ["sqlite", "postgres"];

/**
 * The stores a "both stores" test runs on: both, unless STEAD_TEST_STORES names some (the fast
 * tier sets `sqlite`: it starts no Postgres). The one way a test says "on each store":
 * `describe.each(STORE_KINDS)("… on %s", (kind) => …)`.
 */
export const STORE_KINDS: readonly StoreKind[] = storeKinds(process.env.STEAD_TEST_STORES);

/** For a test that needs both stores at once (a move between them): skipped when this run has one. */
export const BOTH_STORES = STORE_KINDS.length === ALL_KINDS.length;

function storeKinds(setting: string | undefined): readonly StoreKind[] {
  if (setting === undefined || setting.trim() === "") return ALL_KINDS;
  const named = setting.split(",").map((s) => s.trim());
  const unknown = named.filter((n) => !(ALL_KINDS as readonly string[]).includes(n));
  if (unknown.length > 0) throw new Error(`STEAD_TEST_STORES names ${unknown.map((u) => JSON.stringify(u)).join(", ")}: fix: a comma-separated list of ${ALL_KINDS.join(", ")}, or unset`);
  return ALL_KINDS.filter((k) => named.includes(k));
}

export interface OnStore {
  kind: StoreKind;
  /** The store's location: a file path or a postgres:// URL. */
  location: string;
  stead: Stead;
  /** Rows of a query with `?` placeholders (rewritten to $1, $2… for Postgres), read from the database. */
  rows(sql: string, ...params: unknown[]): Promise<Record<string, unknown>[]>;
  /** A statement run against the database behind Stead's back (a test's tampering), placeholders as in `rows`. */
  write(sql: string, ...params: unknown[]): Promise<void>;
  cleanup(): Promise<void>;
}

export async function onStore(kind: StoreKind, label: string, options: Omit<SteadOptions, "store"> = {}): Promise<OnStore> {
  let location: string;
  let remove: () => Promise<void>;
  let db: TestDatabase | undefined;
  if (kind === "sqlite") {
    const t = tempStorePath();
    location = t.path;
    remove = () => Promise.resolve(t.remove());
  } else {
    db = await freshMigratedDatabase(label);
    location = db.url;
    remove = () => (db as TestDatabase).drop();
  }
  const stead = createStead({ store: location, ...options });
  await stead.ready();
  return {
    kind,
    location,
    stead,
    async rows(sql, ...params) {
      if (kind === "sqlite") {
        const file = new Database(location, { readonly: true, fileMustExist: true });
        try {
          return file.prepare(sql).all(...params) as Record<string, unknown>[];
        } finally {
          file.close();
        }
      }
      let n = 0;
      const text = sql.replace(/\?/g, () => `$${++n}`);
      return withClient(location, async (c) => (await c.query(text, params)).rows as Record<string, unknown>[]);
    },
    async write(sql, ...params) {
      if (kind === "sqlite") {
        const file = new Database(location, { fileMustExist: true });
        try {
          file.prepare(sql).run(...params);
        } finally {
          file.close();
        }
        return;
      }
      let n = 0;
      const text = sql.replace(/\?/g, () => `$${++n}`);
      await withClient(location, async (c) => {
        await c.query(text, params);
      });
    },
    async cleanup() {
      await stead.close().catch(() => undefined);
      await remove();
    },
  };
}

/**
 * Everything the database holds, as text a person with its files could read: SQLite's file and
 * its WAL, byte for byte; every Postgres table's rows as JSON (row_to_json reads each value
 * detoasted, decompressed: a raw page scan of compressed values would prove nothing).
 */
export async function storeText(s: OnStore): Promise<string> {
  if (s.kind === "sqlite") return [s.location, `${s.location}-wal`].filter(existsSync).map((f) => readFileSync(f).toString("latin1")).join("\n");
  const parts: string[] = [];
  for (const t of await s.rows("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")) {
    for (const r of await s.rows(`SELECT row_to_json(x)::text AS j FROM "${String(t.tablename)}" x`)) parts.push(String(r.j));
  }
  return parts.join("\n");
}
