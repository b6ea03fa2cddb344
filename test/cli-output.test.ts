/**
 * What the real `stead` binary prints: run ids it refuses or echoes (a `-` start, a 10 KB
 * argument cut to an excerpt and its length), and `ps` saying how many runs it left out.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { createStead, workflow } from "../src/index.js";
import { cli, dumpStore, FIXTURES, lines, requireBuild, tempDir } from "./cli-helpers.js";

const TWO = join(FIXTURES, "two.ts");

beforeAll(() => requireBuild());

describe("run ids", () => {
  let dir: string;
  let db: string;

  beforeAll(async () => {
    dir = tempDir();
    db = join(dir, "s.db");
    expect((await cli(["run", TWO, "--workflow", "cli-alpha", "--id", "done-1", "--store", db], dir)).code).toBe(0);
  });

  it.each([
    ["run --id=-rf", () => ["run", TWO, "--workflow", "cli-alpha", "--id=-rf"]],
    ["run --id -rf", () => ["run", TWO, "--workflow", "cli-alpha", "--id", "-rf"]],
    ["fork --id=-x", () => ["fork", "done-1", "--id=-x"]],
  ])("an id starting with - is refused (%s): exit 2, nothing written", async (_name, args) => {
    const before = dumpStore(db);
    const r = await cli([...args(), "--store", db], dir);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual([expect.stringMatching(/^stead: invalid run id "-(rf|x)" — use 1-200 characters: letters, digits, '_', '\.', ':' or '-', not starting with '-'$/)]);
    expect(dumpStore(db)).toEqual(before);
  });

  it("a new store is not created for a run id starting with -", async () => {
    const d = tempDir();
    const r = await cli(["run", TWO, "--workflow", "cli-alpha", "--id=-rf", "--store", join(d, "s.db")], d);
    expect(r.code).toBe(2);
    expect(readdirSync(d)).toEqual([]);
  });

  const huge = "q".repeat(10_240);
  const excerpt = `${"q".repeat(48)}… (10240 characters)`;
  it.each([
    ["status", () => ["status", huge], `no run with id ${excerpt}`],
    ["why", () => ["why", huge], `no run with id ${excerpt}`],
    ["logs", () => ["logs", huge], `no run with id ${excerpt}`],
    ["approve", () => ["approve", huge, "ship"], `no run with id ${excerpt}`],
    ["cancel", () => ["cancel", huge], `no run with id ${excerpt}`],
    ["snapshots", () => ["snapshots", huge], `no run with id ${excerpt}`],
    ["run --id", () => ["run", TWO, "--workflow", "cli-alpha", "--id", huge], `invalid run id "${"q".repeat(48)}"… (10240 characters)`],
    ["fork --id", () => ["fork", "done-1", "--id", huge], `invalid run id "${"q".repeat(48)}"… (10240 characters)`],
  ])("a 10 KB id given to %s is echoed as an excerpt and its length", async (_name, args, message) => {
    const r = await cli([...args(), "--store", db], dir);
    expect(r.code).toBe(2);
    const err = lines(r.stderr);
    expect(err).toHaveLength(1);
    expect(err[0]).toContain(`stead: ${message}`);
    expect((err[0] ?? "").length).toBeLessThan(300);
  });
});

describe("stead ps when it shows fewer runs than match", () => {
  let dir: string;
  let db: string;

  beforeAll(async () => {
    dir = tempDir();
    db = join(dir, "s.db");
    const stead = createStead({ store: db });
    const wf = workflow("ps-many", () => null);
    const other = workflow("ps-other", () => null);
    for (let i = 0; i < 60; i++) await stead.start(wf, i, { id: `many-${String(i).padStart(2, "0")}` });
    for (let i = 0; i < 5; i++) await stead.start(other, i, { id: `other-${i}` });
    await stead.close();
  });

  it("the default limit: says 50 of 65 shown and how to see the rest", async () => {
    const r = await cli(["ps", "--store", db], dir);
    expect(r.code).toBe(0);
    const out = lines(r.stdout);
    expect(out).toHaveLength(1 + 50 + 1);
    expect(out[out.length - 1]).toBe("50 of 65 runs shown (newest first); see more with --limit 65");
  });

  it("with a status filter, counts the runs that match it", async () => {
    const r = await cli(["ps", "--status", "pending", "--limit", "10", "--store", db], dir);
    const out = lines(r.stdout);
    expect(out).toHaveLength(1 + 10 + 1);
    expect(out[out.length - 1]).toBe("10 of 65 pending runs shown (newest first); see more with --limit 65");
  });

  it("says nothing when every run is shown, and --json stays an array of the runs shown", async () => {
    const all = lines((await cli(["ps", "--limit", "65", "--store", db], dir)).stdout);
    expect(all).toHaveLength(1 + 65);
    const json = JSON.parse((await cli(["ps", "--json", "--limit", "7", "--store", db], dir)).stdout) as unknown[];
    expect(json).toHaveLength(7);
  });
});
