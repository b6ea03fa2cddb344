/**
 * Every listing shape the store promises (src/store/README.md, "Run listing") is served by its
 * index: the database's own plan for the exact statement the store sends, first page and a page
 * after a cursor, shows an index walk in the page's order, never a full scan and never a sort of
 * the matches (the id prefix, documented as a range of ids then sorted, is the one sort allowed).
 * SQLite plans as Stead leaves it (no ANALYZE): each walk uses its shape's index. Postgres plans on
 * 20,000 runs with statistics, as autovacuum would have them, with every plan type allowed: it may
 * walk the sort key's own index checking the filter instead (its estimate of the two), but never
 * scans the table, sorts, or gathers a bitmap.
 */
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteStore } from "../src/store/sqlite/index.js";
import { PostgresStore } from "../src/store/postgres/index.js";
import { checkRunQuery } from "../src/store/listing-cursor.js";
import { listRunsQuery } from "../src/store/sql/run-listing.js";
import { POSTGRES_DIALECT, SQLITE_DIALECT } from "../src/store/sql/dialect.js";
import type { RunQuery, Store } from "../src/store/types.js";
import { SEED_T0, seedPostgres, seedSqlite } from "./helpers/seed-runs.js";
import { tempStorePath } from "./helpers/temp-store.js";
import { freshDatabase, type TestDatabase } from "./setup/postgres.js";

const RUNS = 20_000;
const MIDDLE = { createdSince: SEED_T0 + 10 * 5_000, createdBefore: SEED_T0 + 10 * 15_000 };

interface Shape {
  name: string;
  query: RunQuery;
  /** The index each walk uses, by sort key. */
  index: Record<"createdAt" | "updatedAt", string>;
}

const byKey = (stem: string) => ({ createdAt: `${stem}_created`, updatedAt: `${stem}_updated` });

const SHAPES: Shape[] = [
  { name: "no filter", query: {}, index: byKey("runs") },
  { name: "one status", query: { status: ["pending"] }, index: byKey("runs_status") },
  { name: "several statuses", query: { status: ["waiting", "held", "failed"] }, index: byKey("runs_status") },
  { name: "definition", query: { definition: "def-3" }, index: byKey("runs_definition") },
  { name: "session", query: { sessionId: "s-2" }, index: byKey("runs_session") },
  { name: "parent", query: { parentId: "parent-1" }, index: byKey("runs_parent") },
];

/** Every shape × sort key × order, with and without a range on the sort key. */
function cases(): { title: string; query: RunQuery; index: string }[] {
  const out: { title: string; query: RunQuery; index: string }[] = [];
  for (const s of SHAPES) {
    for (const sort of ["createdAt", "updatedAt"] as const) {
      for (const order of ["asc", "desc"] as const) {
        const range = sort === "createdAt" ? MIDDLE : { updatedSince: MIDDLE.createdSince, updatedBefore: MIDDLE.createdBefore };
        out.push({ title: `${s.name}, ${sort} ${order}`, query: { ...s.query, sort, order, limit: 50 }, index: s.index[sort] });
        out.push({ title: `${s.name} in a ${sort} range, ${sort} ${order}`, query: { ...s.query, ...range, sort, order, limit: 50 }, index: s.index[sort] });
      }
    }
  }
  return out;
}

const PREFIX_CASES = (["createdAt", "updatedAt"] as const).flatMap((sort) => (["asc", "desc"] as const).map((order) => ({ title: `id prefix, ${sort} ${order}`, query: { idPrefix: "run_018bcfe57", sort, order, limit: 50 } })));

/** The first page's statement and the one after its cursor, as the store would send them. */
async function statements(store: Store, dialect: typeof SQLITE_DIALECT, query: RunQuery) {
  const first = await store.listRuns(query);
  expect(first.runs.length, "the shape's first page").toBeGreaterThan(0);
  const pages = [query, ...(first.nextCursor === null ? [] : [{ ...query, cursor: first.nextCursor }])];
  return pages.map((q) => listRunsQuery(dialect, checkRunQuery(q)));
}

describe("SQLite: each promised listing is an index walk", () => {
  let store: SqliteStore;
  let db: Database.Database;
  let remove: () => void;

  beforeAll(async () => {
    const t = tempStorePath();
    remove = t.remove;
    store = new SqliteStore({ path: t.path });
    await store.migrate();
    db = new Database(t.path);
    seedSqlite(db, RUNS);
  }, 120_000);
  afterAll(async () => {
    db.close();
    await store.close();
    remove();
  });

  const plan = (q: { sql: string; params: unknown[] }) => (db.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...q.params) as { detail: string }[]).map((r) => r.detail);

  it.each(cases())("$title", async ({ query, index }) => {
    for (const q of await statements(store, SQLITE_DIALECT, query)) {
      const lines = plan(q);
      const onRuns = lines.filter((l) => /\bruns\b/.test(l));
      expect(onRuns.length, lines.join("\n")).toBeGreaterThan(0);
      for (const l of onRuns) expect(l, lines.join("\n")).toMatch(new RegExp(`^(SEARCH|SCAN) runs USING (COVERING )?INDEX ${index}\\b`));
      expect(lines.filter((l) => /TEMP B-TREE/.test(l)), lines.join("\n")).toEqual([]);
    }
  });

  it.each(PREFIX_CASES)("$title: a range of the key, its matches sorted", async ({ query }) => {
    for (const q of await statements(store, SQLITE_DIALECT, query)) {
      const lines = plan(q);
      expect(lines.filter((l) => /\bruns\b/.test(l)), lines.join("\n")).toEqual([expect.stringMatching(/^SEARCH runs USING INDEX sqlite_autoindex_runs_1 \(id>\? AND id<\?\)/)]);
    }
  });
});

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  Plans?: PlanNode[];
}

const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

describe("Postgres: each promised listing is an index walk", () => {
  let database: TestDatabase;
  let store: PostgresStore;
  let client: pg.Client;

  beforeAll(async () => {
    database = await freshDatabase("listing-plans");
    store = new PostgresStore({ connectionString: database.url });
    await store.migrate();
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
    await seedPostgres(client, RUNS);
  }, 120_000);
  afterAll(async () => {
    await client?.end();
    await store?.close();
    await database?.drop();
  });

  const plan = async (q: { sql: string; params: unknown[] }): Promise<PlanNode> => {
    const r = await client.query<{ "QUERY PLAN": { Plan: PlanNode }[] }>(`EXPLAIN (FORMAT JSON) ${q.sql}`, q.params);
    const p = r.rows[0]?.["QUERY PLAN"][0]?.Plan;
    if (!p) throw new Error("EXPLAIN returned no plan");
    return p;
  };

  it.each(cases())("$title", async ({ query, index }) => {
    for (const q of await statements(store, POSTGRES_DIALECT, query)) {
      const all = nodes(await plan(q));
      const shown = JSON.stringify(all.map((n) => [n["Node Type"], n["Index Name"] ?? n["Relation Name"] ?? ""]));
      const scans = all.filter((n) => n["Relation Name"] === "runs");
      expect(scans.length, shown).toBeGreaterThan(0);
      const ordered = [index, query.sort === "updatedAt" ? "runs_updated" : "runs_created"];
      for (const s of scans) {
        expect(s["Node Type"], shown).toMatch(/^Index (Only )?Scan$/);
        expect(ordered, shown).toContain(s["Index Name"]);
      }
      expect(all.filter((n) => /Sort|Seq Scan|Bitmap/.test(n["Node Type"])).map((n) => n["Node Type"]), shown).toEqual([]);
    }
  });

  it.each(PREFIX_CASES)("$title: a range of runs_id_pattern, its matches sorted", async ({ query }) => {
    for (const q of await statements(store, POSTGRES_DIALECT, query)) {
      const all = nodes(await plan(q));
      const shown = JSON.stringify(all.map((n) => [n["Node Type"], n["Index Name"] ?? n["Relation Name"] ?? ""]));
      expect(all.filter((n) => n["Node Type"] === "Seq Scan"), shown).toEqual([]);
      expect(all.map((n) => n["Index Name"]), shown).toContain("runs_id_pattern");
    }
  });
});
