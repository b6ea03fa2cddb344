/**
 * One schema description (src/store/schema/tables.ts), and each store's live schema after its
 * migrations equal to it: the same tables, columns (type, nullability, default, storage), keys
 * and indexes (predicates included) as the description's own DDL builds in an empty database. A
 * store made at an older version and migrated ends equal to a fresh one.
 */
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteStore, MIGRATIONS as SQLITE_MIGRATIONS, LATEST_VERSION as SQLITE_LATEST } from "../src/store/sqlite/index.js";
import { PostgresStore } from "../src/store/postgres/index.js";
import { MIGRATIONS as PG_MIGRATIONS, LATEST_VERSION as PG_LATEST } from "../src/store/postgres/migrations.js";
import { schemaDdl } from "../src/store/schema/ddl.js";
import { SCHEMA_VERSION } from "../src/store/schema/tables.js";
import { postgresSchema, sqliteSchema, type LiveSchema } from "./helpers/live-schema.js";
import { freshDatabase, type TestDatabase } from "./setup/postgres.js";
import { tempStorePath } from "./helpers/temp-store.js";

const BOOKKEEPING = `
  CREATE TABLE stead_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE stead_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL);
  INSERT INTO stead_meta (key, value) VALUES ('marker', 'stead-store');`;

it("the description is of the schema version both dialects' migrations reach", () => {
  expect([SQLITE_LATEST, PG_LATEST]).toEqual([SCHEMA_VERSION, SCHEMA_VERSION]);
});

describe("SQLite's live schema", () => {
  const removers: (() => void)[] = [];
  afterAll(() => removers.forEach((r) => r()));

  function fileSchema(path: string): LiveSchema {
    const db = new Database(path, { readonly: true });
    try {
      return sqliteSchema(db);
    } finally {
      db.close();
    }
  }

  function described(): LiveSchema {
    const db = new Database(":memory:");
    try {
      db.exec(schemaDdl("sqlite"));
      return sqliteSchema(db);
    } finally {
      db.close();
    }
  }

  async function migrated(): Promise<string> {
    const t = tempStorePath();
    removers.push(t.remove);
    const store = new SqliteStore({ path: t.path });
    await store.migrate();
    await store.close();
    return t.path;
  }

  it("after every migration, is the description's", async () => {
    expect(fileSchema(await migrated())).toEqual(described());
  });

  it.each([1, 3, 4, 6, 8, 9])("of a store made at version %i and migrated, is a fresh store's", async (version) => {
    const t = tempStorePath();
    removers.push(t.remove);
    const db = new Database(t.path);
    db.exec(BOOKKEEPING.replace("BIGINT", "INTEGER"));
    for (const m of SQLITE_MIGRATIONS.filter((x) => x.version <= version)) {
      db.exec(m.sql);
      db.prepare("INSERT INTO stead_migrations (version, name, applied_at) VALUES (?, ?, 0)").run(m.version, m.name);
    }
    db.close();
    const store = new SqliteStore({ path: t.path, create: false });
    await store.migrate();
    await store.close();
    expect(fileSchema(t.path)).toEqual(fileSchema(await migrated()));
  });
});

describe("Postgres's live schema", () => {
  const dbs: TestDatabase[] = [];
  afterAll(async () => {
    for (const d of dbs) await d.drop();
  });

  async function schemaOf(label: string, build: (c: pg.Client, url: string) => Promise<void>): Promise<LiveSchema> {
    const db = await freshDatabase(label);
    dbs.push(db);
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      await build(c, db.url);
      return await postgresSchema(c);
    } finally {
      await c.end();
    }
  }

  const migrate = async (_c: pg.Client, url: string) => {
    const store = new PostgresStore({ connectionString: url });
    await store.migrate();
    await store.close();
  };

  it("after every migration, is the description's", async () => {
    const live = await schemaOf("schema-live", migrate);
    const described = await schemaOf("schema-described", async (c) => {
      await c.query(schemaDdl("postgres"));
    });
    expect(live).toEqual(described);
  });

  it.each([1, 3, 5, 6, 8, 9])("of a store made at version %i and migrated, is a fresh store's", async (version) => {
    const old = await schemaOf(`schema-v${version}`, async (c, url) => {
      await c.query(BOOKKEEPING);
      for (const m of PG_MIGRATIONS.filter((x) => x.version <= version)) {
        await c.query(m.sql);
        await c.query("INSERT INTO stead_migrations (version, name, applied_at) VALUES ($1, $2, 0)", [m.version, m.name]);
      }
      await migrate(c, url);
    });
    expect(old).toEqual(await schemaOf("schema-fresh", migrate));
  });
});
