/**
 * `stead ps` reads no journal: what it shows comes from the runs' rows and a few rows per run
 * (the last journal entry's key fields, the latest event, open waits and holds), so a page of runs
 * costs the same whatever their journals hold. Shown from the world, not from ps's own report:
 * - SQLite: every overflow page of the journal (the large step outputs) is overwritten with
 *   garbage; `stead status` of such a run now fails, and `stead ps` still lists every run.
 * - Postgres: the server's own count of `steps` rows read, around one `stead ps`.
 * Also ps's filters, sort and cursor as flags, and the next page's command it prints.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStead, workflow } from "../src/index.js";
import { withClient } from "./setup/databases.js";
import { freshDatabase, type TestDatabase } from "./setup/postgres.js";
import { cli, lines, requireBuild, tempDir, type Summary } from "./cli-helpers.js";

beforeAll(() => requireBuild());

const RUNS = 4;
const STEPS = 30;

/** Steps with ~20 KB outputs (each spans several overflow pages), a small last step, then a wait. */
const big = workflow("ps-big", async (ctx, n: number) => {
  for (let i = 0; i < STEPS; i++) await ctx.step(`s${i}`, () => `${n}:${i}:${"x".repeat(20_000)}`);
  await ctx.step("last", () => "ok");
  await ctx.signal("go");
});

async function seed(store: string): Promise<string[]> {
  const stead = createStead({ store });
  const ids: string[] = [];
  try {
    for (let n = 0; n < RUNS; n++) {
      const run = await stead.run(big, n, { id: `big-${n}` });
      expect(run.status).toBe("waiting");
      ids.push(run.id);
    }
  } finally {
    await stead.close();
  }
  return ids;
}

/** Overwrites every overflow page of table `steps` (where its outputs' bytes live) with garbage. */
function corruptJournalOverflow(path: string): number {
  const db = new Database(path);
  db.pragma("wal_checkpoint(TRUNCATE)");
  const pageSize = Number(db.pragma("page_size", { simple: true }));
  const pages = (db.prepare("SELECT pageno FROM dbstat WHERE name = 'steps' AND pagetype = 'overflow'").all() as { pageno: number }[]).map((p) => p.pageno);
  db.close();
  const fd = openSync(path, "r+");
  try {
    for (const p of pages) writeSync(fd, Buffer.alloc(pageSize, 0xab), 0, pageSize, (p - 1) * pageSize);
  } finally {
    closeSync(fd);
  }
  return pages.length;
}

describe("stead ps on SQLite, with every journal's large outputs unreadable", () => {
  let dir: string;
  let db: string;
  let ids: string[];

  beforeAll(async () => {
    dir = tempDir();
    db = join(dir, "s.db");
    ids = await seed(db);
    expect(corruptJournalOverflow(db)).toBeGreaterThan(RUNS * STEPS);
  }, 120_000);

  it("the journals are really unreadable: stead status fails", async () => {
    const status = await cli(["status", "big-0", "--store", db], dir);
    expect(status.code).not.toBe(0);
    expect(status.stderr).toMatch(/malformed|corrupt|not readable/i);
  });

  it("stead ps still lists every run with its wait and last step", async () => {
    const ps = await cli(["ps", "--json", "--store", db], dir);
    expect(ps.stderr).toBe("");
    expect(ps.code).toBe(0);
    const rows = JSON.parse(ps.stdout) as Summary[];
    expect(rows.map((r) => r.id)).toEqual([...ids].reverse());
    for (const r of rows) {
      expect(r).toMatchObject({ status: "waiting", waitingFor: [{ kind: "signal", name: "go" }], lastStep: { seq: STEPS + 1, id: "go", kind: "signal", status: "waiting" } });
    }
    const table = await cli(["ps", "--store", db], dir);
    expect(table.code).toBe(0);
    expect(lines(table.stdout)[1]).toMatch(/^big-3\s+ps-big\s+waiting\s+signal "go"\s+go \(waiting\)\s+/);
  });
});

describe("stead ps on Postgres", () => {
  let pgdb: TestDatabase;
  afterAll(() => pgdb?.drop());

  /** Rows of `steps` the server has read (sequentially or through an index), and scans of it. */
  const stepReads = (url: string) =>
    withClient(url, async (c) => {
      await c.query("SELECT pg_stat_clear_snapshot()");
      const r = (await c.query<{ rows: string; scans: string }>(
        `SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) + coalesce((SELECT sum(idx_tup_read) FROM pg_stat_user_indexes WHERE relname = 'steps'), 0) AS rows,
                coalesce(seq_scan, 0) + coalesce(idx_scan, 0) AS scans
         FROM pg_stat_user_tables WHERE relname = 'steps'`,
      )).rows[0];
      return { rows: Number(r?.rows ?? 0), scans: Number(r?.scans ?? 0) };
    });

  it("reads at most two rows of steps per run listed, however long the journals", async () => {
    pgdb = await freshDatabase("ps-reads");
    const ids = await seed(pgdb.url);
    const dir = tempDir();
    // Statistics arrive when a backend reports them: wait until the seeding's are in and still.
    let before = await stepReads(pgdb.url);
    for (let same = 0; same < 3; ) {
      await new Promise((r) => setTimeout(r, 700));
      const now = await stepReads(pgdb.url);
      same = now.rows === before.rows && now.scans === before.scans ? same + 1 : 0;
      before = now;
    }
    const ps = await cli(["ps", "--json", "--store", pgdb.url], dir);
    expect(ps.stderr).toBe("");
    expect(ps.code).toBe(0);
    let after = before;
    for (const end = Date.now() + 15_000; after.scans === before.scans && Date.now() < end; ) {
      await new Promise((r) => setTimeout(r, 200));
      after = await stepReads(pgdb.url);
    }
    expect(after.scans).toBeGreaterThan(before.scans);
    // The journals hold RUNS × (STEPS + 2) rows; ps may touch the last of each (an index entry and its row).
    expect(after.rows - before.rows).toBeLessThanOrEqual(2 * RUNS);
    const rows = JSON.parse(ps.stdout) as Summary[];
    expect(rows.map((r) => r.id)).toEqual([...ids].reverse());
    for (const r of rows) expect(r).toMatchObject({ lastStep: { id: "go", status: "waiting" }, waitingFor: [{ kind: "signal", name: "go" }] });
  }, 180_000);
});
