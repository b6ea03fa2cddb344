/**
 * Review 2 (item 10): a plain backup's record is text whoever edited the file wrote (its digests
 * cover the rows, not the record), and a damaged backup's refusal quotes the value it found. The
 * CLI printed both raw: a recorded `source` of "\x1b]0;pwned\x07\x1b[2J" retitled the terminal
 * and cleared it. Elsewhere such text goes through the CLI's printable(): control codes shown as
 * `\xNN`, never sent.
 */
import { copyFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStead, workflow } from "../../src/index.js";
import { cli, requireBuild, tempDir } from "../cli-helpers.js";
import { completeRuns } from "../helpers/completed-runs.js";

const ESCAPES = "\x1b]0;pwned\x07\x1b[2J";
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

const flow = workflow("backup-text", { version: "1" }, async (ctx, n: number) => ctx.step("a", () => `output ${n}`));

describe("text a backup holds, printed by the CLI", () => {
  let dir = "";
  let backup = "";

  beforeAll(async () => {
    requireBuild();
    dir = tempDir("stead-backup-text-");
    const store = join(dir, "stead.db");
    await completeRuns(createStead({ store }), flow, [["r1", 1]]);
    backup = join(dir, "backup.db");
    const r = await cli(["backup", "--to", backup, "--store", store], dir);
    expect(r.code, r.stderr).toBe(0);
  }, 60_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function edited(name: string, sql: string, ...params: string[]): string {
    const file = join(dir, `${name}.db`);
    copyFileSync(backup, file);
    const db = new Database(file);
    try {
      db.prepare(sql).run(...params);
    } finally {
      db.close();
    }
    return file;
  }

  it("a recorded source with terminal escapes is shown as \\xNN by stead backup --restore, never sent", async () => {
    const file = edited("source", "UPDATE stead_meta SET value = json_set(value, '$.source', ?) WHERE key = 'backup'", ESCAPES);
    const r = await cli(["backup", "--restore", file, "--store", join(dir, "restored", "s.db")], dir);
    expect(r.code, r.stderr).toBe(0);
    expect(CONTROL.test(r.stdout), JSON.stringify(r.stdout)).toBe(false);
    expect(r.stdout).toContain("from \\x1b]0;pwned\\x07\\x1b[2J");
  }, 60_000);

  it("a value with terminal escapes quoted by a refusal is shown as \\xNN on standard error", async () => {
    const file = edited("value", "UPDATE runs SET created_at = ?", ESCAPES);
    const r = await cli(["backup", "--restore", file, "--store", join(dir, "never", "s.db")], dir);
    expect(r.code, r.stderr).toBe(2);
    expect(CONTROL.test(r.stderr.replace(/\n$/, "")), JSON.stringify(r.stderr)).toBe(false);
    expect(r.stderr).toContain("\\x1b]0;pwned");
  }, 60_000);
});
