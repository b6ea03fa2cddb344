/** Every refusal of the `stead` CLI: exit 2, one stderr line naming the problem, nothing written. */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { cli, dumpStore, FIXTURES, lines, requireBuild, tempDir } from "./cli-helpers.js";

const APPROVAL = join(FIXTURES, "approval.ts");
const TWO = join(FIXTURES, "two.ts");
const NOTHING = join(FIXTURES, "nothing.ts");

beforeAll(() => requireBuild());

describe("stead CLI: bad input changes nothing and says what is wrong on one line", () => {
  let dir: string;
  let db: string;
  let store: string[];

  beforeAll(async () => {
    dir = tempDir();
    db = join(dir, "s.db");
    store = ["--store", db];
    expect((await cli(["run", APPROVAL, "--input", '{"item":"x"}', "--id", "waiting-1", ...store], dir)).code).toBe(3);
    expect((await cli(["run", TWO, "--workflow", "cli-alpha", "--id", "done-1", ...store], dir)).code).toBe(0);
  });

  const cases: [string, () => string[], RegExp][] = [
    ["invalid --input JSON", () => ["run", APPROVAL, "--input", "{bad json"], /--input is not valid JSON \(.+\)/],
    ["an unknown run id", () => ["status", "no-such-run"], /no run with id no-such-run — .*stead ps/],
    ["a wait the run does not wait for", () => ["approve", "waiting-1", "launch"], /run waiting-1 \(waiting\) is not waiting for approval "launch"; it waits for approval "ship"/],
    ["an unknown hold", () => ["release", "waiting-1", "4242", "--choice", "retry"], /run waiting-1 has no open hold "4242"/],
    ["a decision on a run that is not waiting", () => ["approve", "done-1", "ship"], /run done-1 \(completed\) is not waiting for approval "ship"/],
    ["invalid signal JSON", () => ["signal", "waiting-1", "ship", "{nope"], /the signal payload is not valid JSON/],
    ["a workflow file that exports no workflow", () => ["run", NOTHING], /nothing\.ts exports no workflow — .*export const x = workflow\("name", async \(ctx, input\) => \.\.\.\)/],
    ["a usage error", () => ["deny", "waiting-1", "ship"], /required option '--reason <text>' not specified/],
  ];

  it.each(cases)("%s", async (_name, args, message) => {
    const before = dumpStore(db);
    const r = await cli([...args(), ...store], dir);
    expect(r.code).toBe(2);
    const err = lines(r.stderr);
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(/^stead: /);
    expect(err[0]).toMatch(message);
    expect(dumpStore(db)).toEqual(before);
  });
});

describe("stead CLI: a store it must not touch", () => {
  const refusals = (file: string): string[][] => [
    ["ps", "--store", file],
    ["approve", "some-run", "ship", "--store", file],
    ["run", APPROVAL, "--input", "{}", "--store", file],
  ];

  async function expectRefused(dir: string, file: string, message: RegExp): Promise<void> {
    for (const args of refusals(file)) {
      const r = await cli(args, dir);
      expect(r.code, args[0]).toBe(2);
      expect(lines(r.stderr), args[0]).toEqual([expect.stringMatching(message)]);
    }
  }

  it("refuses a file of random bytes and leaves it byte for byte", async () => {
    const dir = tempDir();
    const file = join(dir, "junk.db");
    const bytes = randomBytes(8192);
    writeFileSync(file, bytes);
    await expectRefused(dir, file, /^stead: .*junk\.db is not a Stead store .*— point --store/);
    expect(readFileSync(file).equals(bytes)).toBe(true);
    expect(readdirSync(dir)).toEqual(["junk.db"]);
  });

  it("refuses an SQLite database of another application and leaves it byte for byte", async () => {
    const dir = tempDir();
    const file = join(dir, "app.db");
    const other = new Database(file);
    other.exec("CREATE TABLE people (name TEXT); INSERT INTO people VALUES ('ada'), ('grace');");
    other.close();
    const bytes = readFileSync(file);
    await expectRefused(dir, file, /^stead: .*app\.db is an SQLite database but not a Stead store/);
    expect(readFileSync(file).equals(bytes)).toBe(true);
  });

  it("refuses a store written by a newer Stead and changes none of its rows", async () => {
    const dir = tempDir();
    const file = join(dir, "s.db");
    expect((await cli(["run", APPROVAL, "--input", '{"item":"x"}', "--id", "w-1", "--store", file], dir)).code).toBe(3);
    const db = new Database(file);
    db.prepare("INSERT INTO stead_migrations (version, name, applied_at) VALUES (999, 'from the future', 0)").run();
    db.close();
    const before = dumpStore(file);
    await expectRefused(dir, file, /^stead: the store .*s\.db has schema version 999, newer than this Stead's \d+ — upgrade stead/);
    const r = await cli(["approve", "w-1", "ship", "--store", file], dir);
    expect(r.code).toBe(2);
    expect(dumpStore(file)).toEqual(before);
  });

  it("read and answer verbs do not create a missing store", async () => {
    const dir = tempDir();
    const file = join(dir, "nowhere", "s.db");
    for (const args of [["ps"], ["holds"], ["why", "r"], ["approve", "r", "ship"]]) {
      const r = await cli([...args, "--store", file], dir);
      expect(r.code, args[0]).toBe(2);
      expect(lines(r.stderr), args[0]).toEqual([expect.stringMatching(/^stead: no Stead store at .*nowhere\/s\.db — /)]);
    }
    expect(existsSync(join(dir, "nowhere"))).toBe(false);
  });
});
