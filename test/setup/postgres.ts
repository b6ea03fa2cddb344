/**
 * Postgres for test files.
 *
 *   const db = await freshDatabase("my-case");   // an empty database on the run's shared server
 *   ... new PostgresStore({ connectionString: db.url }) ...
 *   await db.drop();                              // terminates its connections and drops it
 *   const m = await freshMigratedDatabase("x");   // one at the current schema: a copy of a
 *                                                 // template migrated once per test process
 *
 * The shared server (see postgres-global.ts) is never stopped by tests. A test that needs to
 * stop or restart Postgres starts a private server, which only it uses:
 *
 *   describe.skipIf(PRIVATE_SERVER_UNAVAILABLE)("…", () => {
 *     let server: PrivateServer;
 *     beforeAll(async () => { server = await startPrivateServer(); });
 *     afterAll(() => server.close());
 *     it("…", async () => { await server.restart(2_000); });  // down 2 s, same port, same data
 *   });
 */
import pg from "pg";
import { afterEach, inject } from "vitest";
import { PostgresStore } from "../../src/store/postgres/index.js";
import { createDatabase, databaseName, dropDatabase, withDatabase } from "./databases.js";
import { adminUrlOf, createEmbeddedServer, TEST_SETTINGS, type ServerHandle, type StopMode } from "./embedded-server.js";
import type { ProvidedPostgres } from "./provided.js";

export interface TestDatabase {
  name: string;
  /** Connection URL of the new database, with the admin user's credentials. */
  url: string;
  /** Terminates the database's connections and drops it. Idempotent. */
  drop(): Promise<void>;
}

export function postgresSetup(): ProvidedPostgres {
  const provided = inject("steadPostgres");
  if (!provided) {
    throw new Error(
      process.env.STEAD_TEST_STORES === "sqlite"
        ? "this test needs Postgres, which the fast tier does not start: fix: run it with `npm test` (or `npx vitest run FILE`), or take it out of vitest.fast.config.ts"
        : "no Postgres was provided to this test: vitest.config.ts must list test/setup/postgres-global.ts in globalSetup",
    );
  }
  return provided;
}

/** Database `name` on `adminUrl`'s server, dropped (once) by `drop`. */
function testDatabase(adminUrl: string, name: string, drop: () => Promise<void>): TestDatabase {
  let dropped = false;
  return {
    name,
    url: withDatabase(adminUrl, name),
    async drop() {
      if (dropped) return;
      dropped = true;
      await drop();
    },
  };
}

async function freshDatabaseOn(adminUrl: string, prefix: string, label: string): Promise<TestDatabase> {
  const name = databaseName(prefix, label);
  await createDatabase(adminUrl, name);
  return testDatabase(adminUrl, name, () => dropDatabase(adminUrl, name));
}

/** A new, empty database on the run's shared server, named after `label`. */
export async function freshDatabase(label: string): Promise<TestDatabase> {
  const { adminUrl, databasePrefix } = postgresSetup();
  return freshDatabaseOn(adminUrl, databasePrefix, label);
}

/**
 * The shared server's admin connections, kept for this process: a database made and dropped per
 * case would otherwise pay a connection (and its password exchange) twice. The shared server is
 * never stopped by tests, so these never outlive it.
 */
let adminPool: pg.Pool | undefined;
function admin(): pg.Pool {
  if (!adminPool) {
    adminPool = new pg.Pool({ connectionString: postgresSetup().adminUrl, max: 2, idleTimeoutMillis: 2_000, allowExitOnIdle: true });
    adminPool.on("error", () => undefined);
  }
  return adminPool;
}

let template: Promise<string> | undefined;
/** This process's template: a database at the current schema, with no connection left open to it (a copy needs none). */
function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const { adminUrl, databasePrefix } = postgresSetup();
    const name = databaseName(databasePrefix, "template");
    await admin().query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    const store = new PostgresStore({ connectionString: withDatabase(adminUrl, name) });
    try {
      await store.migrate();
    } finally {
      await store.close();
    }
    return name;
  })();
  return template;
}

/**
 * A new database on the shared server at the current schema, as `migrate()` leaves a fresh one:
 * copied from a template migrated once per test process. For tests of what runs on the schema;
 * a test of migrations themselves takes `freshDatabase`.
 */
export async function freshMigratedDatabase(label: string): Promise<TestDatabase> {
  const { adminUrl, databasePrefix } = postgresSetup();
  const from = await migratedTemplate();
  const name = databaseName(databasePrefix, label);
  await admin().query(`CREATE DATABASE ${pg.escapeIdentifier(name)} TEMPLATE ${pg.escapeIdentifier(from)}`);
  return testDatabase(adminUrl, name, async () => {
    await admin().query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  });
}

/**
 * Why private servers cannot be started in this run, or undefined when they can. With
 * STEAD_TEST_DATABASE_URL the user chose an external server (often because embedded binaries do
 * not run on their machine), so tests that need to stop Postgres skip and say so.
 */
/** `fresh(label)` inside a describe: a fresh database per call, all dropped after each test. */
export function useFreshDatabases(): (label: string) => Promise<TestDatabase> {
  const dbs: TestDatabase[] = [];
  afterEach(async () => {
    for (const d of dbs.splice(0)) await d.drop();
  });
  return async (label) => {
    const d = await freshDatabase(label);
    dbs.push(d);
    return d;
  };
}

export const PRIVATE_SERVER_UNAVAILABLE: string | undefined = process.env.STEAD_TEST_DATABASE_URL
  ? "STEAD_TEST_DATABASE_URL is set: tests do not start, stop or restart Postgres servers of their own"
  : undefined;

export interface PrivateServer {
  /** Admin URL (database `postgres`); the port stays the same across restarts. */
  readonly adminUrl: string;
  readonly port: number;
  /** Plain-JSON description, for a child process that must reach the same server. */
  readonly handle: ServerHandle;
  freshDatabase(label: string): Promise<TestDatabase>;
  /** "fast" (default) disconnects clients and shuts down cleanly; "immediate" is a crash (recovery at next start). */
  stop(mode?: StopMode): Promise<void>;
  /** Starts it again on the same port and data dir; waits until it accepts connections. */
  start(): Promise<void>;
  /** stop(mode), stay down `downMs`, start(). */
  restart(downMs: number, mode?: StopMode): Promise<void>;
  running(): boolean;
  /** Stops the server and removes its files. Idempotent. */
  close(): Promise<void>;
}

/**
 * A server of this test's own (about 1 s to start), which it may stop and restart at will.
 * `dataDir`: where its data lives (a new directory, e.g. on a small tmpfs); its WAL stays apart.
 */
export async function startPrivateServer(options: { dataDir?: string } = {}): Promise<PrivateServer> {
  if (PRIVATE_SERVER_UNAVAILABLE) throw new Error(PRIVATE_SERVER_UNAVAILABLE);
  const server = await createEmbeddedServer({ ...options, settings: TEST_SETTINGS });
  const h = server.handle;
  const adminUrl = adminUrlOf(h);
  return {
    adminUrl,
    port: h.port,
    handle: h,
    freshDatabase: (label) => freshDatabaseOn(adminUrl, "stead_p", label),
    stop: (mode = "fast") => server.stop(mode),
    start: () => server.start(),
    async restart(downMs, mode = "fast") {
      await server.stop(mode);
      await new Promise((r) => setTimeout(r, downMs));
      await server.start();
    },
    running: () => server.running(),
    close: () => server.destroy(),
  };
}
