/**
 * Creating and dropping uniquely named databases through an admin URL. Used by test files (one
 * database per file or per case) and by the global teardown (leftovers on an external server).
 */
import { randomBytes } from "node:crypto";
import pg from "pg";

/** Postgres truncates identifiers to 63 bytes; names here stay under that and are plain [a-z0-9_]. */
const MAX_NAME = 63;

let counter = 0;

export function databaseName(prefix: string, label: string): string {
  const unique = `${process.pid}_${++counter}_${randomBytes(3).toString("hex")}`;
  const clean = label.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "");
  const room = MAX_NAME - prefix.length - unique.length - 2;
  return room > 0 && clean ? `${prefix}_${clean.slice(0, room)}_${unique}` : `${prefix}_${unique}`;
}

/** `url` with its database replaced by `database` (credentials, host, port and parameters kept). */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

export async function withClient<T>(url: string, use: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  // A server going away mid-query surfaces as the query's rejection; the 'error' event must not crash the process.
  client.on("error", () => undefined);
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function createDatabase(adminUrl: string, name: string): Promise<void> {
  await withClient(adminUrl, (c) => c.query(`CREATE DATABASE ${c.escapeIdentifier(name)}`));
}

/** Drops `name`, terminating its open connections first (WITH (FORCE), Postgres 13+). Absent is fine. */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await withClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${c.escapeIdentifier(name)} WITH (FORCE)`));
}

export async function databaseExists(adminUrl: string, name: string): Promise<boolean> {
  return withClient(adminUrl, async (c) => (await c.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])).rowCount === 1);
}

/** Databases whose names start with `prefix_` (LIKE wildcards in the prefix are escaped). */
export async function databasesWithPrefix(adminUrl: string, prefix: string): Promise<string[]> {
  const pattern = `${prefix.replace(/[\\%_]/g, (ch) => `\\${ch}`)}\\_%`;
  return withClient(adminUrl, async (c) => {
    const res = await c.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE $1 ORDER BY datname", [pattern]);
    return res.rows.map((r) => r.datname);
  });
}
