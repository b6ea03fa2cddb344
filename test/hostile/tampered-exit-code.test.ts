/**
 * Issue 39, "also found": STEAD_DATA_TAMPERED exits 7, and the exit code's description says so
 * (it read only "store gone, full, unreachable"). Through the real CLI: an encrypted store whose
 * key rows were deleted makes `ps` and `run` exit 7 with the code, writing nothing; `stead --help`,
 * the CLI reference's list of exit codes (docs/reference/cli.md) and docs/errors.md describe 7 as covering it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { cli, FIXTURES, requireBuild, ROOT } from "../cli-helpers.js";
import { tempDir } from "../helpers/temp-store.js";

const SEALED = join(FIXTURES, "sealed.ts");

function sql<T>(path: string, fn: (db: Database.Database) => T): T {
  const db = new Database(path, { fileMustExist: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

describe("exit code 7 and STEAD_DATA_TAMPERED", () => {
  const cleanups: (() => void)[] = [];
  beforeAll(() => requireBuild());
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });

  it("a store whose key rows were deleted exits 7 with the code, and writes nothing", async () => {
    const work = tempDir("stead-t7-work");
    const keys = tempDir("stead-t7-keys");
    cleanups.push(work.remove, keys.remove);
    const env = { STEAD_KEY_DIR: keys.dir };
    expect((await cli(["keys", "init"], work.dir, { env })).code).toBe(0);
    expect((await cli(["run", SEALED, "--input", JSON.stringify({ note: "first" }), "--id", "t-1"], work.dir, { env })).code).toBe(0);
    const db = join(work.dir, ".stead", "stead.db");
    sql(db, (d) => d.prepare("DELETE FROM data_keys").run());

    const ps = await cli(["ps", "--json"], work.dir, { env });
    expect(ps.code).toBe(7);
    expect((JSON.parse(ps.stderr.trim().split("\n").at(-1) ?? "{}") as { error?: { code?: string } }).error?.code).toBe("STEAD_DATA_TAMPERED");
    const run = await cli(["run", SEALED, "--input", JSON.stringify({ note: "in the clear?" }), "--id", "t-2"], work.dir, { env });
    expect(run.code).toBe(7);
    expect(run.stderr).toContain("data_keys");
    expect(sql(db, (d) => d.prepare("SELECT id FROM runs").all())).toEqual([{ id: "t-1" }]);
    expect(sql(db, (d) => d.prepare("SELECT count(*) AS n FROM data_keys").get())).toEqual({ n: 0 });
  }, 90_000);

  it("stead --help, the CLI reference and docs/errors.md describe exit 7 as covering damaged or tampered data", async () => {
    const help = await cli(["--help"], ROOT);
    const seven = help.stdout.split("\n").find((l) => /^\s*7\s/.test(l));
    expect(seven).toMatch(/tampered/);
    const reference = readFileSync(join(ROOT, "docs", "reference", "cli.md"), "utf8");
    const exits = reference.slice(reference.indexOf("Exit codes:"), reference.indexOf("\n   70 ", reference.indexOf("Exit codes:")));
    expect(exits).toMatch(/\n {4}7 {2}[^\n]*tampered/);
    const errors = readFileSync(join(ROOT, "docs", "errors.md"), "utf8");
    expect(errors.split("\n").find((l) => l.startsWith("| `STEAD_DATA_TAMPERED`"))).toMatch(/\| 7 \| 500 \|$/);
  }, 30_000);
});
