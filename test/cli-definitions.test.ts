/**
 * Loading definition files through the real `stead` binary: two different definitions with one
 * name are refused before anything is written (the store is not even created), and a syntax error
 * names its file and line.
 */
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cli, dumpStore, FIXTURES, lines, requireBuild, spawnCli, tempDir, until } from "./cli-helpers.js";

const TWO_SAME = join(FIXTURES, "two-same.ts");
const DUP_A = join(FIXTURES, "dup-a.ts");
const DUP_B = join(FIXTURES, "dup-b.ts");
const TWO = join(FIXTURES, "two.ts");

beforeAll(() => requireBuild());

describe("two definitions with one name", () => {
  it.each([
    ["run --workflow <the name>", ["run", TWO_SAME, "--workflow", "cli-same"]],
    ["run without --workflow", ["run", TWO_SAME]],
    ["send --agent", ["send", "s-1", "hello", "--agent", TWO_SAME]],
    ["worker", ["worker", TWO_SAME]],
  ])("in one file (%s): exit 2, one line naming the name and both exports, no store created", async (_name, args) => {
    const dir = tempDir();
    const r = await cli([...args, "--store", join(dir, "s.db")], dir);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(lines(r.stderr)).toEqual([expect.stringMatching(/^stead: .*two-same\.ts exports two workflows named "cli-same": `first` and `second` — give each workflow a unique name/)]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("across the files given to a worker: exit 2 naming the name and both files, no store created", async () => {
    const dir = tempDir();
    const r = await cli(["worker", TWO, DUP_A, DUP_B, "--store", join(dir, "s.db")], dir, { timeoutMs: 20_000 });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(lines(r.stderr)).toEqual([expect.stringMatching(/^stead: two workflows are named "cli-dup": `fromA` of .*dup-a\.ts and `fromB` of .*dup-b\.ts — /)]);
    expect(existsSync(join(dir, "s.db"))).toBe(false);
  });

  it("an existing store is left row for row", async () => {
    const dir = tempDir();
    const db = join(dir, "s.db");
    expect((await cli(["run", TWO, "--workflow", "cli-alpha", "--id", "done-1", "--store", db], dir)).code).toBe(0);
    const before = dumpStore(db);
    const r = await cli(["run", TWO_SAME, "--workflow", "cli-same", "--store", db], dir);
    expect(r.code).toBe(2);
    expect(dumpStore(db)).toEqual(before);
  });

  it("the same file given twice is one set of definitions, not a clash", async () => {
    const dir = tempDir();
    const worker = spawnCli(["worker", TWO, TWO, "--poll", "50", "--store", join(dir, "s.db")], dir);
    try {
      await until("the worker to start", () => (worker.stdout().includes("worker ") && worker.stdout().includes(" started: cli-alpha, cli-beta") ? true : undefined));
    } finally {
      worker.child.kill("SIGTERM");
    }
    const stopped = await worker.done;
    expect(stopped.stderr).toBe("");
    expect(stopped.code).toBe(0);
  });
});

describe("a syntax error in a definition file", () => {
  const cases: [string, string, Record<string, string>, number][] = [
    ["an .mjs module", "bad.mjs", {}, 4],
    ["a .js ES module", "bad.js", { "package.json": '{"type":"module"}' }, 4],
    ["a .js CommonJS module", "bad.js", {}, 4],
  ];

  it.each(cases)("%s: the message names the file and the line", async (_name, file, extra, line) => {
    const dir = tempDir();
    for (const [f, text] of Object.entries(extra)) writeFileSync(join(dir, f), text);
    writeFileSync(join(dir, file), "// a definition file\nconst a = 1;\n\nconst b = ;\n");
    const r = await cli(["run", `./${file}`, "--store", join(dir, "s.db")], dir);
    expect(r.code).toBe(2);
    const err = lines(r.stderr);
    expect(err).toHaveLength(1);
    expect(err[0]).toContain(`stead: cannot load ./${file}: SyntaxError at line ${line} of ${join(dir, file)}: Unexpected token ';'`);
    expect(existsSync(join(dir, "s.db"))).toBe(false);
  });
});
