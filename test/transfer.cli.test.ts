/** `stead migrate`, `stead export` and `stead import`, run as the real CLI (dist/) against SQLite files and Postgres. */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStead, workflow } from "../src/index.js";
import { TRANSFER_SCHEMA_VERSION as SCHEMA } from "../src/store/transfer/index.js";
import { BIN, cli, requireBuild, tempDir, type CliResult } from "./cli-helpers.js";
import { freshDatabase, type TestDatabase } from "./setup/postgres.js";

const greet = workflow("xfer-cli-greet", async (ctx, name: string) => {
  const hello = await ctx.step("hello", () => `hello ${name}`);
  const d = await ctx.approval("send", { hello });
  return d.approved ? hello : null;
});

const dbs: TestDatabase[] = [];
async function database(label: string): Promise<TestDatabase> {
  const db = await freshDatabase(label);
  dbs.push(db);
  return db;
}

/** The CLI with `input` on its standard input (cli() gives it none). */
function cliWithStdin(args: readonly string[], cwd: string, input: string): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("STEAD_")) env[k] = v;
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  child.stdin.end(input);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

const oneLine = (r: CliResult) => {
  expect(r.stderr.trim().split("\n")).toHaveLength(1);
  return r.stderr.trim();
};

let dir: string;
let source: string;

beforeAll(async () => {
  requireBuild();
  dir = tempDir("stead-xfer-cli-");
  source = join(dir, "source.db");
  const stead = createStead({ store: source });
  try {
    expect((await stead.run(greet, "ann", { pollMs: 20 })).status).toBe("waiting");
    expect((await stead.run(greet, "bob", { pollMs: 20 })).status).toBe("waiting");
  } finally {
    await stead.close();
  }
});

afterAll(async () => {
  for (const db of dbs) await db.drop();
});

describe("stead migrate", () => {
  it("creates the schema in an empty Postgres database (from --store or STEAD_DATABASE_URL) and prints its version", async () => {
    const db = await database("xfer-cli-migrate");
    const first = await cli(["migrate", "--store", db.url], dir);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^store postgres:\/\/.+ \(postgres\) is at schema version \d+\n$/);
    expect(first.stdout).not.toContain(new URL(db.url).password || "\0");
    const again = await cli(["migrate"], dir, { env: { STEAD_DATABASE_URL: db.url } });
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(first.stdout);
  });

  it("creates an SQLite store where none exists", async () => {
    const path = join(dir, "fresh", "new.db");
    const r = await cli(["migrate", "--store", path], dir);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`store ${path} (sqlite) is at schema version ${SCHEMA}\n`);
    expect(existsSync(path)).toBe(true);
  });
});

describe("stead export / stead import", () => {
  it("SQLite → file → Postgres → standard output → SQLite through stdin: verified at each import, the same dump at the end", async () => {
    const file = join(dir, "moved.dump");
    const exported = await cli(["export", "--store", source, "--out", file], dir);
    expect(exported.stderr).toBe("");
    expect(exported.code).toBe(0);
    expect(exported.stdout).toBe(`exported ${source} (sqlite, schema ${SCHEMA}) to ${file}: runs 2, steps 4, waits 2, holds 0, events ${eventCount(file)}, blobs 0, snapshots 0, idempotency_keys 0, tokens 0\n`);
    const dump = readFileSync(file, "utf8");
    expect(JSON.parse(dump.split("\n")[0] ?? "")).toMatchObject({ "stead-export": 1, source: "sqlite" });

    const db = await database("xfer-cli-import");
    const imported = await cli(["import", file, "--store", db.url], dir);
    expect(imported.stderr).toBe("");
    expect(imported.code).toBe(0);
    expect(imported.stdout).toMatch(/^imported .*moved\.dump \(from sqlite, schema \d+\) into postgres:\/\/.+ \(postgres\):\n/);
    expect(imported.stdout).toMatch(/\n {2}runs {14}2\n {2}steps {13}4\n {2}waits {13}2\n {2}holds {13}0\n {2}events {12}\d+\n {2}blobs {13}0\n {2}snapshots {9}0\n {2}idempotency_keys {2}0\n {2}tokens {12}0\n/);
    expect(imported.stdout).toMatch(/\nverified: every table's row count and SHA-256 digest in the store match the dump\nthe dump is of a plain store and not signed: its digests detect damage, not edits\n$/);

    // The moved runs answer to the CLI on Postgres.
    const ps = await cli(["ps", "--json"], dir, { env: { STEAD_DATABASE_URL: db.url } });
    expect(ps.code).toBe(0);
    expect((JSON.parse(ps.stdout) as { status: string }[]).map((r) => r.status)).toEqual(["waiting", "waiting"]);

    const fromPg = await cli(["export"], dir, { env: { STEAD_DATABASE_URL: db.url } });
    expect(fromPg.code).toBe(0);
    expect(fromPg.stderr).toMatch(/^exported postgres:\/\/.+ \(postgres, schema \d+\): runs 2, steps 4, waits 2, holds 0, events \d+, blobs 0, snapshots 0, idempotency_keys 0, tokens 0\n$/);
    expect(JSON.parse(fromPg.stdout.split("\n")[0] ?? "")).toMatchObject({ source: "postgres" });

    const back = join(dir, "back.db");
    const viaStdin = await cliWithStdin(["import", "-", "--store", back], dir, fromPg.stdout);
    expect(viaStdin.stderr).toBe("");
    expect(viaStdin.code).toBe(0);
    expect(viaStdin.stdout).toMatch(/^imported standard input \(from postgres, schema \d+\) into .*back\.db \(sqlite\):/);
    const final = await cli(["export", "--store", back], dir);
    expect(final.code).toBe(0);
    expect(final.stdout).toBe(dump);
  });

  it("refuses, on one line with exit 2 and nothing written: a non-empty target, a missing file, a truncated dump, an empty database to export", async () => {
    const file = join(dir, "refusals.dump");
    expect((await cli(["export", "--store", source, "--out", file], dir)).code).toBe(0);
    const dump = readFileSync(file, "utf8");

    const full = join(dir, "full.db");
    expect((await cli(["import", file, "--store", full], dir)).code).toBe(0);
    const again = await cli(["import", file, "--store", full], dir);
    expect(again.code).toBe(2);
    expect(oneLine(again)).toMatch(/^stead: the store at .*full\.db already holds runs \(run .+, and maybe more\) — import into a new, empty store/);
    expect(again.stdout).toBe("");

    const missingTarget = join(dir, "never-1.db");
    const missing = await cli(["import", join(dir, "no-such.dump"), "--store", missingTarget], dir);
    expect(missing.code).toBe(2);
    expect(oneLine(missing)).toMatch(/^stead: no dump file at .*no-such\.dump — pass the file `stead export --out <file>` wrote/);
    expect(existsSync(missingTarget)).toBe(false);

    const truncated = join(dir, "truncated.dump");
    writeFileSync(truncated, dump.split("\n").slice(0, -2).join("\n") + "\n");
    const cutTarget = join(dir, "never-2.db");
    const cut = await cli(["import", truncated, "--store", cutTarget], dir);
    expect(cut.code).toBe(2);
    expect(oneLine(cut)).toMatch(/^stead: .*truncated\.dump ends at line \d+ without its trailer line: it is truncated — /);
    expect(existsSync(cutTarget)).toBe(false);

    const empty = await database("xfer-cli-empty");
    const nothing = await cli(["export", "--store", empty.url], dir);
    expect(nothing.code).toBe(2);
    expect(oneLine(nothing)).toMatch(/holds no Stead store — create one with `stead migrate`/);
    expect(nothing.stdout).toBe("");

    const out = join(dir, "not-written.dump");
    const noStore = await cli(["export", "--store", join(dir, "absent.db"), "--out", out], dir);
    expect(noStore.code).toBe(2);
    expect(oneLine(noStore)).toMatch(/no Stead store at .*absent\.db/);
    expect(existsSync(out)).toBe(false);
  });

  it("--help of each command shows an example", async () => {
    for (const command of ["migrate", "export", "import"]) {
      const r = await cli([command, "--help"], dir);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`Example:\\n {2}\\$ (STEAD_DATABASE_URL=\\S+ )?stead ${command} `));
    }
  });
});

function eventCount(file: string): number {
  return (JSON.parse(readFileSync(file, "utf8").split("\n")[0] ?? "") as { tables: { events: number } }).tables.events;
}
