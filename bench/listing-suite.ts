/**
 * The run-listing benchmark (run-listing.ts) on each store: an SQLite file and a Postgres
 * database of 1,000 runs and of 1,000,000, seeded in bulk, then measured side by side.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { seedPostgres, seedSqlite } from "../test/helpers/seed-runs.js";
import { stead } from "./lib.js";
import type { BenchServer } from "./pg-server.js";
import { fmt, printTable } from "./report.js";
import { LARGE, listingRows, SMALL, type SeededStore } from "./run-listing.js";
import { inScratch } from "./temp-dir.js";

async function sqliteStore(dir: string, runs: number): Promise<SeededStore> {
  const store = new stead.SqliteStore({ path: join(dir, "stead.db") });
  await store.migrate();
  const t0 = performance.now();
  const db = new Database(join(dir, "stead.db"));
  try {
    seedSqlite(db, runs);
  } finally {
    db.close();
  }
  return { store, runs, seedSeconds: (performance.now() - t0) / 1000 };
}

async function postgresStore(url: string, runs: number): Promise<SeededStore> {
  const store = new stead.PostgresStore({ connectionString: url });
  await store.migrate();
  const t0 = performance.now();
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await seedPostgres(c, runs);
  } finally {
    await c.end();
  }
  return { store, runs, seedSeconds: (performance.now() - t0) / 1000 };
}

async function report(title: string, small: SeededStore, large: SeededStore): Promise<void> {
  console.log(`${title}: seeded ${fmt(small.runs)} runs in ${fmt(small.seedSeconds, 1)} s, ${fmt(large.runs)} in ${fmt(large.seedSeconds, 1)} s (bulk INSERTs, a few transactions)`);
  const { lines, rows } = await listingRows(small, large);
  for (const l of lines) console.log(`    ${l}`);
  console.log("");
  printTable(rows.map((r) => ({ ...r, name: `Listing ${r.name}` })));
}

export async function sqliteListingSuite(): Promise<void> {
  await inScratch("listing-small", (a) =>
    inScratch("listing-large", async (b) => {
      const small = await sqliteStore(a, SMALL);
      const large = await sqliteStore(b, LARGE);
      try {
        await report("Run listing, SQLite: 50-run pages, 1,000,000 runs against 1,000", small, large);
      } finally {
        await small.store.close();
        await large.store.close();
      }
    }),
  );
}

export async function postgresListingSuite(server: BenchServer): Promise<void> {
  await server.withDatabase("listing-small", (a) =>
    server.withDatabase("listing-large", async (b) => {
      const small = await postgresStore(a.url, SMALL);
      const large = await postgresStore(b.url, LARGE);
      try {
        await report("Run listing, Postgres: 50-run pages, 1,000,000 runs against 1,000", small, large);
      } finally {
        await small.store.close();
        await large.store.close();
      }
    }),
  );
}
