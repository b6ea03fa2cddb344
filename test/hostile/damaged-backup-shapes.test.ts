/**
 * Review 2 (item 9): damage the first fix did not try. A backup is a file users copy around; any
 * damage to it should be STEAD_BAD_BACKUP (exit 2) with a fix that speaks of backups, never
 * `internal error` (exit 70), and never a fix meant for a live store ("start a run first",
 * "correct that row in the store by hand, then export again").
 */
import { copyFileSync, existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStead, workflow } from "../../src/index.js";
import { cli, requireBuild, tempDir } from "../cli-helpers.js";
import { completeRuns, numberedRuns } from "../helpers/completed-runs.js";

const flow = workflow("damaged-shapes", { version: "1" }, async (ctx, n: number) => ctx.step("a", () => `output ${n}`));

describe("a backup damaged in other ways", () => {
  let dir = "";
  let backup = "";

  beforeAll(async () => {
    requireBuild();
    dir = tempDir("stead-damaged-shapes-");
    const store = join(dir, "stead.db");
    await completeRuns(createStead({ store }), flow, numberedRuns("r", 3));
    backup = join(dir, "backup.db");
    const r = await cli(["backup", "--to", backup, "--store", store], dir);
    expect(r.code, r.stderr).toBe(0);
  }, 60_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function edited(name: string, sql: string): string {
    const file = join(dir, `${name}.db`);
    copyFileSync(backup, file);
    const db = new Database(file);
    try {
      db.exec(sql);
    } finally {
      db.close();
    }
    return file;
  }

  const cases: [string, () => string][] = [
    ["an empty file (a copy that failed)", () => (writeFileSync(join(dir, "empty.db"), ""), join(dir, "empty.db"))],
    ["a table dropped", () => edited("drop-table", "DROP TABLE events")],
    ["a column dropped", () => edited("drop-column", "ALTER TABLE tokens DROP COLUMN last_used_at")],
    ["a value of the wrong type", () => edited("wrong-type", "UPDATE runs SET created_at = 'abc'")],
    ["its record's time not a number", () => edited("record-time", "UPDATE stead_meta SET value = json_set(value, '$.takenAt', 'yesterday') WHERE key = 'backup'")],
  ];

  for (const [what, make] of cases) {
    it(`${what}: STEAD_BAD_BACKUP, exit 2, nothing created`, async () => {
      const file = make();
      const target = join(dir, "never", "stead.db");
      const r = await cli(["backup", "--restore", file, "--store", target, "--json"], dir);
      // --json: a refusal's line carries its code (an internal error's line is not JSON).
      const error = (() => {
        try {
          return (JSON.parse(r.stderr) as { error: { code: string; fix: string } }).error;
        } catch {
          return { code: r.stderr.slice(0, 200), fix: "" };
        }
      })();
      expect({ code: r.code, error: error.code }, r.stderr).toEqual({ code: 2, error: "STEAD_BAD_BACKUP" });
      // A backup's fix, not a live store's.
      expect(error.fix).toMatch(/backup/);
      expect(error.fix).not.toMatch(/start a run|by hand|export again/);
      expect(r.stdout).toBe("");
      expect(existsSync(join(dir, "never"))).toBe(false);
    }, 60_000);
  }
});
