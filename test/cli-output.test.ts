/**
 * What the real `stead` binary prints: run ids it refuses or echoes (a `-` start, a 10 KB
 * argument cut to an excerpt and its length), and `ps` paging: the next page's command, filters as flags.
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
    expect(lines(r.stderr)).toEqual([expect.stringMatching(/^stead: invalid run id "-(rf|x)" — use 1-200 characters: letters, digits, '_', ':' or '-', not starting with '-' \('\.' is kept for a child run's id\)$/)]);
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

describe("stead ps, a page at a time", () => {
  let dir: string;
  let db: string;

  beforeAll(async () => {
    dir = tempDir();
    db = join(dir, "s.db");
    const stead = createStead({ store: db });
    const wf = workflow("ps-many", () => null);
    const other = workflow("ps-other", () => null);
    for (let i = 0; i < 60; i++) await stead.runs.start(wf, i, { id: `many-${String(i).padStart(2, "0")}` });
    for (let i = 0; i < 5; i++) await stead.runs.start(other, i, { id: `other-${i}` });
    await stead.close();
  });

  /** The command a page prints for the next one, as arguments. */
  const nextOf = (line: string | undefined): string[] => {
    const m = /next page: stead (.*)$/.exec(line ?? "");
    expect(m, line).not.toBeNull();
    return (m?.[1] ?? "").split(" ");
  };
  const idsOf = (out: string[]) => out.slice(1).filter((l) => !l.includes("next page:")).map((l) => l.split(/\s+/)[0]);

  it("the default page is 50 runs, then the command for the next page, which ends the list", async () => {
    const first = await cli(["ps", "--store", db], dir);
    expect(first.code).toBe(0);
    const out = lines(first.stdout);
    expect(out).toHaveLength(1 + 50 + 1);
    expect(out[out.length - 1]).toMatch(/^50 runs shown \(newest created first\); next page: stead ps --limit 50 --store \S+ --cursor [A-Za-z0-9_-]+$/);
    const second = await cli(nextOf(out[out.length - 1]), dir);
    expect(second.code).toBe(0);
    const rest = lines(second.stdout);
    expect(rest).toHaveLength(1 + 15);
    const seen = [...idsOf(out), ...idsOf(rest)];
    expect(new Set(seen).size).toBe(65);
  });

  it("filters by status, definition, id prefix and creation time, and pages them with the same filters", async () => {
    const pending = lines((await cli(["ps", "--status", "pending", "--limit", "10", "--store", db], dir)).stdout);
    expect(pending).toHaveLength(1 + 10 + 1);
    expect(nextOf(pending[pending.length - 1])).toEqual(expect.arrayContaining(["--status", "pending", "--limit", "10"]));
    expect(idsOf(lines((await cli(["ps", "--definition", "ps-other", "--store", db], dir)).stdout)).sort()).toEqual(["other-0", "other-1", "other-2", "other-3", "other-4"]);
    expect(idsOf(lines((await cli(["ps", "--id", "many-5", "--order", "asc", "--store", db], dir)).stdout))).toEqual(Array.from({ length: 10 }, (_, i) => `many-5${i}`));
    expect(lines((await cli(["ps", "--since", "2h", "--limit", "100", "--store", db], dir)).stdout)).toHaveLength(1 + 65);
    expect((await cli(["ps", "--since", "2999-01-01T00:00Z", "--store", db], dir)).stdout.trim()).toBe("no runs");
    // A relative --since is repeated as the time it meant, so the cursor's filters stay the same.
    const since = lines((await cli(["ps", "--since", "2h", "--limit", "40", "--store", db], dir)).stdout);
    const next = nextOf(since[since.length - 1]);
    expect(next[next.indexOf("--since") + 1]).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(lines((await cli(next, dir)).stdout)).toHaveLength(1 + 25);
  });

  it("--json stays an array of the page's runs; the next page's command goes to stderr", async () => {
    const r = await cli(["ps", "--json", "--limit", "7", "--store", db], dir);
    const json = JSON.parse(r.stdout) as unknown[];
    expect(json).toHaveLength(7);
    expect(r.stderr).toMatch(/^next page: stead ps --json --limit 7 --store \S+ --cursor \S+\n$/);
  });

  it("refuses a page over the largest, a bad --since or --sort, and a cursor of other filters, naming them", async () => {
    const over = await cli(["ps", "--limit", "5000", "--store", db], dir);
    expect(over.code).toBe(2);
    expect(over.stderr).toMatch(/limit 5000 is over the largest page, 1000 runs/);
    const since = await cli(["ps", "--since", "yesterday", "--store", db], dir);
    expect(since.code).toBe(2);
    expect(since.stderr).toMatch(/invalid --since: "yesterday"/);
    expect((await cli(["ps", "--sort", "name", "--store", db], dir)).stderr).toMatch(/invalid --sort/);
    const first = lines((await cli(["ps", "--limit", "5", "--store", db], dir)).stdout);
    const cursor = nextOf(first[first.length - 1]).pop() ?? "";
    const mixed = await cli(["ps", "--status", "pending", "--limit", "5", "--store", db, "--cursor", cursor], dir);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toMatch(/cursor continues a listing with other filters/);
    const garbled = await cli(["ps", "--store", db, "--cursor", "garbage!"], dir);
    expect(garbled.code).toBe(2);
    expect(garbled.stderr).toMatch(/cursor is not a cursor this store made/);
  });
});

