/**
 * The Postgres store: the shared conformance suite on a fresh database per case, then what only
 * Postgres has: refusing bad URLs and foreign databases, concurrent migrations, and a server that
 * restarts under the store.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SteadError } from "../src/errors.js";
import { openStore } from "../src/store/index.js";
import pg from "pg";
import { PostgresStore, type PostgresStoreOptions } from "../src/store/postgres/index.js";
import { LATEST_VERSION, MIGRATIONS } from "../src/store/postgres/migrations.js";
import { WAKE_CHANNEL } from "../src/store/postgres/migrations.js";
import type { NewRun, Store } from "../src/store/types.js";
import type { WorkerPresence } from "../src/store/ports/worker-presence.js";
import { describeStoreConformance, type StoreFactory } from "../src/store/conformance/index.js";
import { caught, waitUntil } from "./helpers/waiting.js";
import { databaseExists, withClient, withDatabase } from "./setup/databases.js";
import { freePort } from "./setup/embedded-server.js";
import { freshMigratedDatabase, useFreshDatabases, postgresSetup, PRIVATE_SERVER_UNAVAILABLE, startPrivateServer, type PrivateServer, type TestDatabase } from "./setup/postgres.js";

/** Each store's database, to reopen it and drop it. */
const databases = new Map<Store, TestDatabase>();

const factory: StoreFactory = {
  name: "postgres",
  workerPresence: true,
  async open() {
    const db = await freshMigratedDatabase("conformance");
    const store = new PostgresStore({ connectionString: db.url });
    databases.set(store, db);
    await store.migrate();
    return store;
  },
  async reopen(store) {
    const db = databases.get(store);
    if (!db) throw new Error("reopen of a store this factory did not open");
    const other = new PostgresStore({ connectionString: db.url, create: false });
    await other.migrate();
    return other;
  },
  async dispose(store) {
    await store.close();
    await databases.get(store)?.drop();
    databases.delete(store);
  },
  // Only the connection holding the worker's liveness lock goes; the store's pool stays up.
  async dropPresence(store, workerId) {
    const db = databases.get(store);
    if (!db) throw new Error("dropPresence on a store this factory did not open");
    const n = await withClient(db.url, async (c) => {
      const res = await c.query(
        `SELECT pg_terminate_backend(l.pid) FROM pg_locks l
         WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
           AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND l.classid = ((hashtextextended($1, 0) >> 32) & 4294967295)::oid
           AND l.objid = (hashtextextended($1, 0) & 4294967295)::oid`,
        [workerId],
      );
      return res.rowCount;
    });
    expect(n, "backends holding the presence").toBe(1);
  },
};

describeStoreConformance(factory, { describe, it, expect, beforeEach, afterEach });

// Its optional port is not optional here: the factory's workerPresence says so, and so do the types.
const _hasPresence: PostgresStore extends WorkerPresence ? true : never = true;
void _hasPresence;

function newRun(id: string): NewRun {
  return { id, definition: "def-a", module: null, fingerprint: "fp", input: JSON.stringify({ id }), createdAt: Date.now() };
}

function expectCode(e: unknown, code: string): SteadError {
  expect(e).toBeInstanceOf(SteadError);
  const err = e as SteadError;
  expect({ code: err.code, message: err.message }).toMatchObject({ code });
  expect(err.fix).toEqual(expect.any(String));
  // One line for a terminal.
  expect(err.toLine()).not.toContain("\n");
  return err;
}

/** Opens a store with `options` and runs `use` on it; returns what it threw (or undefined). The store is closed either way. */
async function attempt(options: PostgresStoreOptions, use: (s: PostgresStore) => Promise<unknown>): Promise<unknown> {
  const store = new PostgresStore({ connectTimeoutMs: 5_000, faultRetryMs: 500, ...options });
  try {
    await use(store);
    return undefined;
  } catch (e) {
    return e;
  } finally {
    await store.close();
  }
}

/** Every table of the database's public schema with a hash of its whole content: equal snapshots mean nothing was written. */
async function contentSnapshot(url: string): Promise<Record<string, string>> {
  return withClient(url, async (c) => {
    const tables = (await c.query<{ t: string }>("SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1")).rows.map((r) => r.t);
    const out: Record<string, string> = {};
    for (const t of tables) {
      const id = c.escapeIdentifier(t);
      const row = (await c.query<{ h: string | null; n: string }>(`SELECT md5(string_agg(x::text, ',' ORDER BY x::text)) AS h, count(*) AS n FROM ${id} x`)).rows[0];
      out[t] = `${row?.n ?? "?"}:${row?.h ?? ""}`;
    }
    return out;
  });
}

describe("Postgres store specifics", () => {
  const setup = postgresSetup();
  const fresh = useFreshDatabases();

  it("openStore routes a postgres:// URL to the Postgres store", async () => {
    const d = await fresh("route");
    const store = openStore(d.url);
    try {
      expect(store).toBeInstanceOf(PostgresStore);
      await store.migrate();
      expect(await store.check()).toEqual({ dialect: "postgres", location: store.location, schemaVersion: LATEST_VERSION });
      // The password never shows in what the store reports.
      expect(store.location).not.toContain(new URL(d.url).password);
    } finally {
      await store.close();
    }
  });

  it("refuses an unreachable server with STEAD_STORE_UNREACHABLE", async () => {
    const url = withDatabase(setup.adminUrl, "nowhere");
    const dead = new URL(url);
    dead.hostname = "127.0.0.1";
    dead.port = String(await freePort()); // nothing listens there
    const e = expectCode(await attempt({ connectionString: dead.toString() }, (s) => s.migrate()), "STEAD_STORE_UNREACHABLE");
    expect(e.message).toContain(dead.port);
    expectCode(await attempt({ connectionString: dead.toString(), create: false }, (s) => s.check()), "STEAD_STORE_UNREACHABLE");
  });

  it("refuses wrong credentials with STEAD_STORE_AUTH_FAILED, names no password, and writes nothing", async (ctx) => {
    const d = await fresh("creds");
    const wrong = new URL(d.url);
    wrong.password = "definitely-wrong-pw";
    const accepted = await withClient(wrong.toString(), () => Promise.resolve(true)).catch(() => false);
    if (accepted) ctx.skip("the server at STEAD_TEST_DATABASE_URL does not check passwords (trust authentication)");
    const e = expectCode(await attempt({ connectionString: wrong.toString() }, (s) => s.migrate()), "STEAD_STORE_AUTH_FAILED");
    expect(e.message).not.toContain("definitely-wrong-pw");
    expect(e.message).toMatch(/credential|password|authentication/i);
    expect(await contentSnapshot(d.url)).toEqual({});
  });

  it("a role that may only read and write rows (no CREATE) still probes for room, and simply keeps no reserve", async () => {
    const d = await fresh("dml-role");
    const owner = new PostgresStore({ connectionString: d.url });
    await owner.migrate();
    await owner.close();
    const role = `stead_dml_${Date.now().toString(36)}`;
    await withClient(d.url, async (c) => {
      await c.query(`CREATE ROLE ${role} LOGIN PASSWORD 'dml-pw'`);
      await c.query(`GRANT CONNECT ON DATABASE "${d.name}" TO ${role}`);
      await c.query(`GRANT USAGE ON SCHEMA public TO ${role}`);
      await c.query(`REVOKE CREATE ON SCHEMA public FROM PUBLIC`);
      await c.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`);
      await c.query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ${role}`);
      await c.query(`GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO ${role}`);
    });
    const url = new URL(d.url);
    url.username = role;
    url.password = "dml-pw";
    const store = new PostgresStore({ connectionString: url.toString(), create: false });
    try {
      await expect(store.checkStorage(1024 * 1024)).resolves.toMatchObject({ ok: true });
      await expect(store.restoreReserve()).resolves.toBeUndefined();
      expect(await store.releaseReserve()).toBe(false);
    } finally {
      await store.close();
      await withClient(d.url, async (c) => {
        await c.query(`REASSIGN OWNED BY ${role} TO CURRENT_USER`);
        await c.query(`DROP OWNED BY ${role}`);
      });
      await d.drop();
      await withClient(postgresSetup().adminUrl, (c) => c.query(`DROP ROLE IF EXISTS ${role}`));
    }
  });

  it("refuses a database that does not exist with STEAD_STORE_MISSING and creates nothing", async () => {
    const name = `${setup.databasePrefix}_never_created`;
    const url = withDatabase(setup.adminUrl, name);
    const e = expectCode(await attempt({ connectionString: url }, (s) => s.migrate()), "STEAD_STORE_MISSING");
    expect(e.message).toContain(name);
    expect(await databaseExists(setup.adminUrl, name)).toBe(false);
  });

  it("with create:false, refuses an empty database with STEAD_STORE_MISSING and writes nothing", async () => {
    const d = await fresh("empty");
    expectCode(await attempt({ connectionString: d.url, create: false }, (s) => s.migrate()), "STEAD_STORE_MISSING");
    expectCode(await attempt({ connectionString: d.url, create: false }, (s) => s.check()), "STEAD_STORE_MISSING");
    expect(await contentSnapshot(d.url)).toEqual({});
  });

  it("refuses a database that is not a Stead store with STEAD_NOT_A_STORE, leaving it unchanged", async () => {
    const d = await fresh("foreign");
    await withClient(d.url, (c) => c.query("CREATE TABLE notes (id serial PRIMARY KEY, body text); INSERT INTO notes (body) VALUES ('keep me')"));
    const before = await contentSnapshot(d.url);
    expectCode(await attempt({ connectionString: d.url }, (s) => s.migrate()), "STEAD_NOT_A_STORE");
    expectCode(await attempt({ connectionString: d.url, create: false }, (s) => s.check()), "STEAD_NOT_A_STORE");
    expect(await contentSnapshot(d.url)).toEqual(before);
    expect(Object.keys(before)).toEqual(["notes"]);
  });

  it("refuses a store of a newer schema with STEAD_STORE_TOO_NEW, leaving it unchanged", async () => {
    const d = await fresh("too new");
    const store = new PostgresStore({ connectionString: d.url });
    await store.migrate();
    await store.createRun(newRun("r1"), [{ type: "run.created", data: {} }]);
    await store.close();
    await withClient(d.url, (c) => c.query("INSERT INTO stead_migrations (version, name, applied_at) VALUES (999, 'from the future', 0)"));
    const before = await contentSnapshot(d.url);
    const e = expectCode(await attempt({ connectionString: d.url }, (s) => s.migrate()), "STEAD_STORE_TOO_NEW");
    expect(e.message).toContain("999");
    expectCode(await attempt({ connectionString: d.url, create: false }, (s) => s.check()), "STEAD_STORE_TOO_NEW");
    expect(await contentSnapshot(d.url)).toEqual(before);
  });

  it("five stores migrating one empty database at once apply each migration exactly once", async () => {
    const d = await fresh("concurrent migrate");
    const stores = Array.from({ length: 5 }, () => new PostgresStore({ connectionString: d.url, poolSize: 2 }));
    try {
      const results = await Promise.allSettled(stores.map((s) => s.migrate()));
      expect(results.map((r) => r.status)).toEqual(Array(5).fill("fulfilled"));
      const rows = await withClient(d.url, async (c) => (await c.query<{ version: number; n: string }>("SELECT version, count(*) AS n FROM stead_migrations GROUP BY version ORDER BY version")).rows);
      expect(rows).toEqual(MIGRATIONS.map((m) => ({ version: m.version, n: "1" })));
      for (const s of stores) expect(await s.check()).toMatchObject({ schemaVersion: LATEST_VERSION });
    } finally {
      for (const s of stores) await s.close();
    }
  });

  it("a turn that ends wakes the workers when a later turn of its session waits, and only then", async () => {
    const d = await fresh("turn wake");
    const store = new PostgresStore({ connectionString: d.url });
    const listener = new pg.Client({ connectionString: d.url });
    const heard: string[] = [];
    listener.on("notification", (n) => heard.push(n.payload ?? ""));
    try {
      await store.migrate();
      await store.createRun(newRun("plain"), []);
      await store.createRun({ ...newRun("z1"), sessionId: "Z" }, []);
      await store.createRun({ ...newRun("s1"), sessionId: "S" }, []);
      await store.createRun({ ...newRun("s2"), sessionId: "S" }, []);
      await listener.connect();
      await listener.query(`LISTEN ${WAKE_CHANNEL}`);
      const end = async (runId: string) => expect(await store.commit([[{ runId, run: { status: "completed" } }]])).toEqual([{ ok: true, pauseRequested: false }]);
      await end("s1");
      // A run outside a session, and the last turn of a session, wake nobody. Notifications arrive
      // in commit order: by the time the marker has, any they sent would have too.
      await end("plain");
      await end("z1");
      await listener.query(`SELECT pg_notify('${WAKE_CHANNEL}', 'marker')`);
      await waitUntil("the marker notification", () => heard.includes("marker"));
      expect(heard).toEqual(["", "marker"]);
    } finally {
      await listener.end().catch(() => undefined);
      await store.close();
    }
  });
});

describe.skipIf(PRIVATE_SERVER_UNAVAILABLE)(`Postgres store across server restarts${PRIVATE_SERVER_UNAVAILABLE ? ` (skipped: ${PRIVATE_SERVER_UNAVAILABLE})` : ""}`, () => {
  let server: PrivateServer;
  const dbs: TestDatabase[] = [];
  beforeAll(async () => {
    server = await startPrivateServer();
  });
  afterEach(async () => {
    if (server && !server.running()) await server.start();
    for (const d of dbs.splice(0)) await d.drop();
  });
  afterAll(() => server?.close());
  const fresh = async (label: string) => {
    const d = await server.freshDatabase(label);
    dbs.push(d);
    return d;
  };

  it("the same store instance reads and writes again after the server restarts", async () => {
    const d = await fresh("restart");
    const store = new PostgresStore({ connectionString: d.url, faultRetryMs: 20_000 });
    try {
      await store.migrate();
      await store.createRun(newRun("before"), [{ type: "run.created", data: {} }]);
      await server.restart(500);
      expect(await store.getRun("before")).toMatchObject({ id: "before", status: "pending" });
      await store.createRun(newRun("after"), [{ type: "run.created", data: {} }]);
      expect((await store.listRuns({})).runs.map((r) => r.id).sort()).toEqual(["after", "before"]);
    } finally {
      await store.close();
    }
  });

  it("a write issued while the server is down waits for it and commits exactly once", async () => {
    const d = await fresh("down write");
    const store = new PostgresStore({ connectionString: d.url, faultRetryMs: 20_000 });
    try {
      await store.migrate();
      await store.getRun("warm the pool");
      await server.stop("immediate");
      const writing = store.createRun(newRun("during"), [{ type: "run.created", data: { during: true } }]);
      // Let the write fail against the stopped server at least once before it comes back.
      await new Promise((r) => setTimeout(r, 300));
      await server.start();
      await writing;
      expect(await store.getRun("during")).toMatchObject({ id: "during" });
      expect((await store.events({ runId: "during" })).map((e) => e.type)).toEqual(["run.created"]);
    } finally {
      await store.close();
    }
  });

  it("a read fails with a clear SteadError once the server stays down past faultRetryMs", async () => {
    const d = await fresh("stays down");
    const store = new PostgresStore({ connectionString: d.url, faultRetryMs: 300, connectTimeoutMs: 2_000 });
    try {
      await store.migrate();
      await server.stop("fast");
      expectCode(await caught(() => store.getRun("x")), "STEAD_STORE_UNREACHABLE");
    } finally {
      await store.close();
    }
  });
});
