import { execFile } from "node:child_process";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SteadError } from "../src/errors.js";
import { LATEST_VERSION, SqliteStore, type SqliteStoreOptions } from "../src/store/sqlite/index.js";
import { describeStoreConformance, type StoreFactory } from "../src/store/conformance/index.js";
import type { Store } from "../src/store/types.js";
import { sessionTurns } from "../src/store/run-sets.js";
import { tempDir, tempStorePath } from "./helpers/temp-store.js";

/** Each store's file, to reopen it and remove it. */
const files = new Map<Store, ReturnType<typeof tempStorePath>>();

const factory: StoreFactory = {
  name: "sqlite",
  inProcessWakeups: true,
  async open() {
    const t = tempStorePath();
    const store = new SqliteStore({ path: t.path });
    files.set(store, t);
    await store.migrate();
    return store;
  },
  async reopen(store) {
    const other = new SqliteStore({ path: store.location, create: false });
    await other.migrate();
    return other;
  },
  async dispose(store) {
    await store.close();
    files.get(store)?.remove();
    files.delete(store);
  },
};

describeStoreConformance(factory, { describe, it, expect, beforeEach, afterEach });

describe("SQLite store specifics", () => {
  const dirs: { remove(): void }[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) d.remove();
  });
  const dir = () => {
    const d = tempDir();
    dirs.push(d);
    return d.dir;
  };

  /** Opens a store at `path` and runs `use` on it; returns what it threw (or undefined). The store is closed either way. */
  async function attempt(path: string, use: (s: SqliteStore) => Promise<unknown>, options: SqliteStoreOptions = {}): Promise<unknown> {
    let store: SqliteStore | undefined;
    try {
      store = new SqliteStore({ path, ...options });
      await use(store);
      return undefined;
    } catch (e) {
      return e;
    } finally {
      await store?.close();
    }
  }

  function expectCode(e: unknown, code: string): void {
    expect(e).toBeInstanceOf(SteadError);
    const err = e as SteadError;
    expect(err.code).toBe(code);
    expect(err.fix).toEqual(expect.any(String));
  }

  it("refuses a Postgres store's event position and one past its last event, naming the fix; a read-only store follows", async () => {
    const path = join(dir(), "stead.db");
    const e = await attempt(path, async (store) => {
      await store.migrate();
      await store.createRun({ id: "a", definition: "d", module: null, fingerprint: null, input: "{}", createdAt: 1 }, [{ type: "run.created" }, { type: "second" }]);
      for (const bad of ["p1", "p1.1", "s3", "szzz"]) expectCode(await store.eventsAfter(bad).catch((x: unknown) => x), "STEAD_BAD_POSITION");
      const { position } = await store.eventsAfter(null, { limit: 1 });
      expect((await store.eventsAfter(position)).events.map((x) => x.type)).toEqual(["second"]);
    });
    expect(e).toBeUndefined();
    const reader = new SqliteStore({ path, readonly: true });
    try {
      expect((await reader.eventsAfter(null)).events.map((x) => x.type)).toEqual(["run.created", "second"]);
    } finally {
      await reader.close();
    }
  });

  it("opens the file in WAL mode with synchronous=FULL by default (NORMAL on request)", async () => {
    const path = join(dir(), "stead.db");
    const store = new SqliteStore({ path });
    await store.migrate();
    const other = new Database(path, { readonly: true });
    try {
      expect(other.pragma("journal_mode", { simple: true })).toBe("wal");
    } finally {
      other.close();
    }
    // synchronous is a per-connection setting (better-sqlite3 builds default WAL connections to
    // NORMAL), so it can only be read on the store's own connection.
    expect(store["db"].pragma("synchronous", { simple: true })).toBe(2);
    await store.close();

    const normal = new SqliteStore({ path, synchronous: "NORMAL" });
    expect(normal["db"].pragma("synchronous", { simple: true })).toBe(1);
    await normal.close();
  });

  it("check() reports this code's latest schema version", async () => {
    const path = join(dir(), "stead.db");
    const store = new SqliteStore({ path });
    await store.migrate();
    expect(await store.check()).toEqual({ dialect: "sqlite", location: path, schemaVersion: LATEST_VERSION });
    await store.close();
  });

  it("refuses a file that is not a database, leaving it byte-for-byte unchanged", async () => {
    const d = dir();
    const path = join(d, "notes.txt");
    writeFileSync(path, "these are my notes, not a database\n".repeat(300));
    const before = readFileSync(path);
    expectCode(await attempt(path, (s) => s.migrate()), "STEAD_NOT_A_STORE");
    expectCode(await attempt(path, (s) => s.check(), { create: false }), "STEAD_NOT_A_STORE");
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(readdirSync(d)).toEqual(["notes.txt"]);
  });

  it("refuses a foreign SQLite database, leaving it byte-for-byte unchanged", async () => {
    const d = dir();
    const path = join(d, "app.db");
    const foreign = new Database(path);
    foreign.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('keep me');");
    foreign.close();
    const before = readFileSync(path);
    expectCode(await attempt(path, (s) => s.migrate()), "STEAD_NOT_A_STORE");
    expectCode(await attempt(path, (s) => s.check(), { create: false }), "STEAD_NOT_A_STORE");
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(readdirSync(d)).toEqual(["app.db"]);
  });

  it("refuses a store of a newer schema with STEAD_STORE_TOO_NEW, leaving it byte-for-byte unchanged", async () => {
    const d = dir();
    const path = join(d, "stead.db");
    const store = new SqliteStore({ path });
    await store.migrate();
    await store.close();
    const db = new Database(path);
    db.prepare("INSERT INTO stead_migrations (version, name, applied_at) VALUES (?, 'from the future', 0)").run(LATEST_VERSION + 1);
    db.close();
    const before = readFileSync(path);
    const e = await attempt(path, (s) => s.migrate());
    expectCode(e, "STEAD_STORE_TOO_NEW");
    expect((e as Error).message).toContain(String(LATEST_VERSION + 1));
    expectCode(await attempt(path, (s) => s.check(), { create: false }), "STEAD_STORE_TOO_NEW");
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it("with create:false, refuses a missing path with STEAD_STORE_MISSING and creates nothing", async () => {
    const d = dir();
    const path = join(d, "sub", "stead.db");
    expectCode(await attempt(path, (s) => s.check(), { create: false }), "STEAD_STORE_MISSING");
    expect(existsSync(path)).toBe(false);
    expect(readdirSync(d)).toEqual([]);
  });

  it("processes racing on one file never claim the same run", async () => {
    const d = dir();
    const path = join(d, "stead.db");
    const store = new SqliteStore({ path });
    await store.migrate();
    const n = 60;
    for (let i = 0; i < n; i++) {
      await store.createRun({ id: `race-${i}`, definition: "race", module: null, fingerprint: null, input: "null", createdAt: i }, []);
    }
    const child = fileURLToPath(new URL("./helpers/claim-race-child.ts", import.meta.url));
    const startAt = String(Date.now() + 1_500);
    const run = promisify(execFile);
    const outs = await Promise.all(
      ["p1", "p2", "p3"].map((w) => run(process.execPath, ["--import", "tsx", child, path, w, startAt], { cwd: fileURLToPath(new URL("..", import.meta.url)) })),
    );
    const claimed = outs.map((o) => JSON.parse(o.stdout) as string[]);
    const all = claimed.flat();
    expect(all).toHaveLength(n);
    expect(new Set(all).size).toBe(n);
    for (const r of (await store.listRuns({ limit: n })).runs) expect(r).toMatchObject({ status: "running", fence: 1 });
    await store.close();
  });

  it("processes racing to add turns to one session get distinct, consecutive turns", async () => {
    const path = join(dir(), "stead.db");
    const store = new SqliteStore({ path });
    await store.migrate();
    const child = fileURLToPath(new URL("./helpers/turn-race-child.ts", import.meta.url));
    const startAt = String(Date.now() + 1_500);
    const run = promisify(execFile);
    const perProcess = 30;
    const outs = await Promise.all(
      ["p1", "p2", "p3"].map((p) => run(process.execPath, ["--import", "tsx", child, path, "S-race", p, String(perProcess), startAt], { cwd: fileURLToPath(new URL("..", import.meta.url)) })),
    );
    const made = outs.flatMap((o) => JSON.parse(o.stdout) as [string, number][]);
    const all = Array.from({ length: 3 * perProcess }, (_, i) => i + 1);
    expect(made.map(([, t]) => t).sort((a, b) => a - b)).toEqual(all);
    const stored = await sessionTurns(store, "S-race");
    expect(stored.map((r) => r.turn)).toEqual(all);
    for (const [id, t] of made) expect(stored.find((r) => r.id === id)?.turn).toBe(t);
    await store.close();
  });
});
