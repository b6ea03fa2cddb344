/**
 * Issue 39, item 9: a damaged backup is `STEAD_BAD_BACKUP` (exit 2, a fix), never `internal
 * error` (exit 70), wherever the damage lands: the database header, a table's page header, the
 * middle of a page. Each refusal creates no target, on either store.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStead, workflow } from "../../src/index.js";
import { cli, requireBuild, tempDir } from "../cli-helpers.js";
import { completeRuns, numberedRuns } from "../helpers/completed-runs.js";
import { withClient } from "../setup/databases.js";
import { freshDatabase } from "../setup/postgres.js";

const flow = workflow("damaged-backup", { version: "1" }, async (ctx, n: number) => ctx.step("a", () => `output ${n} `.repeat(400)));

interface Refusal {
  code: string;
  message: string;
  fix: string;
}

describe("a damaged backup", () => {
  let dir = "";
  let backup = "";
  let bytes: Buffer;
  let pageSize = 0;

  beforeAll(async () => {
    requireBuild();
    dir = tempDir("stead-damaged-backup-");
    const store = join(dir, "stead.db");
    await completeRuns(createStead({ store }), flow, numberedRuns("r", 20));
    backup = join(dir, "backup.db");
    const r = await cli(["backup", "--to", backup, "--store", store], dir);
    expect(r.code, r.stderr).toBe(0);
    bytes = readFileSync(backup);
    pageSize = bytes.readUInt16BE(16);
  }, 60_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The backup with 16 bytes at `offset` overwritten. */
  function damagedAt(offset: number): string {
    const copy = Buffer.from(bytes);
    for (let i = 0; i < 16; i++) copy[offset + i] = (copy[offset + i] ?? 0) ^ 0xa5;
    const file = join(dir, `damaged-${offset}.db`);
    writeFileSync(file, copy);
    return file;
  }

  async function refused(file: string, target: string): Promise<Refusal> {
    const r = await cli(["backup", "--restore", file, "--store", target, "--json"], dir);
    expect(r.stdout).toBe("");
    const err = (JSON.parse(r.stderr) as { error: Refusal }).error;
    expect({ code: r.code, errorCode: err.code }, `${file}: ${err.message}`).toEqual({ code: 2, errorCode: "STEAD_BAD_BACKUP" });
    expect(err.message).toContain(file);
    expect(err.message).not.toMatch(/internal error/);
    expect(err.fix.length).toBeGreaterThan(10);
    return err;
  }

  it("is STEAD_BAD_BACKUP (exit 2) whether the damage is in the database header, a page header or inside a page; no target is created", async () => {
    // The database header (page 1), then the first bytes of 14 later pages spread over the file (a b-tree page's header).
    const pages = bytes.length / pageSize;
    const offsets = [24, 96, ...Array.from({ length: 14 }, (_, i) => (1 + Math.floor((i * (pages - 1)) / 14)) * pageSize)];
    let refusals = 0;
    for (const offset of offsets) {
      const file = damagedAt(offset);
      const target = join(dir, "never", `from-${offset}.db`);
      const r = await cli(["backup", "--restore", file, "--store", target, "--json"], dir);
      // Damage to a page no table uses (a free page) changes nothing a restore reads: it may succeed.
      if (r.code === 0) {
        rmSync(join(dir, "never"), { recursive: true, force: true });
        continue;
      }
      refusals++;
      await refused(file, target);
      expect(existsSync(join(dir, "never")), `damage at ${offset} created a target`).toBe(false);
      rmSync(file);
    }
    expect(refusals).toBeGreaterThan(4);
  }, 240_000);

  it("restored into Postgres: refused the same way, and the database is left without a table", async () => {
    const db = await freshDatabase("damaged-backup");
    try {
      await refused(damagedAt(4 * pageSize), db.url);
      const tables = await withClient(db.url, async (c) => (await c.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")).rows);
      expect(tables).toEqual([]);
    } finally {
      await db.drop();
    }
  }, 60_000);
});
