/**
 * `stead run` inputs too large for a command line (`--input-file`, `--input -` for standard input),
 * their refusals (exit 2, one line, nothing written, no store created), and `--detach`.
 */
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { cli, dumpStore, FIXTURES, lines, requireBuild, spawnCli, tempDir, until } from "./cli-helpers.js";

const TWO = join(FIXTURES, "two.ts");
const APPROVAL = join(FIXTURES, "approval.ts");

beforeAll(() => requireBuild());

/** Over the 128 KiB Linux allows one command-line argument. */
const big = { items: Array.from({ length: 4000 }, (_, i) => ({ i, text: `item ${i} `.repeat(8) })) };

function rowsOf(db: string, sql: string): Record<string, unknown>[] {
  const d = new Database(db, { readonly: true });
  try {
    return d.prepare(sql).all() as Record<string, unknown>[];
  } finally {
    d.close();
  }
}

describe("stead run: the input from a file or standard input", () => {
  it("--input-file: a 300 KB input reaches the run intact", async () => {
    const dir = tempDir();
    const db = join(dir, "s.db");
    writeFileSync(join(dir, "big.json"), JSON.stringify(big));
    expect(JSON.stringify(big).length).toBeGreaterThan(300_000);
    const r = await cli(["run", TWO, "--workflow", "cli-alpha", "--id", "f-1", "--input-file", "big.json", "--store", db], dir);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const [row] = rowsOf(db, "SELECT input, output FROM runs WHERE id = 'f-1'");
    expect(JSON.parse(String(row?.input))).toEqual(big);
    expect(JSON.parse(String(row?.output))).toEqual({ alpha: big });
  });

  it("--input -: the input is read from standard input", async () => {
    const dir = tempDir();
    const db = join(dir, "s.db");
    const r = await cli(["run", TWO, "--workflow", "cli-alpha", "--id", "in-1", "--input", "-", "--store", db], dir, { stdin: JSON.stringify(big) });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const [row] = rowsOf(db, "SELECT input FROM runs WHERE id = 'in-1'");
    expect(JSON.parse(String(row?.input))).toEqual(big);
  });

  const refusals: [string, string[], string | undefined, RegExp][] = [
    ["--input and --input-file together", ["--input", "{}", "--input-file", "in.json"], undefined, /^stead: --input and --input-file both give the run's input — pass one of them$/],
    ["a missing --input-file", ["--input-file", "nope.json"], undefined, /^stead: cannot read --input-file nope\.json \(ENOENT: no such file or directory.*\) — /],
    ["a directory as --input-file", ["--input-file", "."], undefined, /^stead: cannot read --input-file \. \(EISDIR: .*\) — /],
    ["invalid JSON in --input-file", ["--input-file", "bad.json"], undefined, /^stead: --input-file bad\.json is not valid JSON \(.+\) — /],
    ["invalid JSON on standard input", ["--input", "-"], "{not json", /^stead: the input on standard input is not valid JSON \(.+\) — /],
    ["empty standard input", ["--input", "-"], "", /^stead: the input on standard input is empty — /],
  ];

  it.each(refusals)("refuses %s: exit 2, one line, no store created", async (_name, args, stdin, message) => {
    const dir = tempDir();
    writeFileSync(join(dir, "in.json"), "{}");
    writeFileSync(join(dir, "bad.json"), "{oops");
    const r = await cli(["run", TWO, "--workflow", "cli-alpha", ...args, "--store", join(dir, "s.db")], dir, stdin === undefined ? {} : { stdin });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(lines(r.stderr)).toEqual([expect.stringMatching(message)]);
    expect(readdirSync(dir).sort()).toEqual(["bad.json", "in.json"]);
  });

  it("an input over the payload ceiling is refused before the store is created", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "in.json"), JSON.stringify({ blob: "x".repeat(1_100_000) }));
    const r = await cli(["run", TWO, "--workflow", "cli-alpha", "--input-file", "in.json", "--store", join(dir, "s.db")], dir);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual([expect.stringMatching(/^stead: the input of cli-alpha produced 1100011 bytes of JSON, over the 1048576-byte payload ceiling — /)]);
    expect(readdirSync(dir)).toEqual(["in.json"]);
  });

  it("a refusal leaves an existing store row for row", async () => {
    const dir = tempDir();
    const db = join(dir, "s.db");
    expect((await cli(["run", TWO, "--workflow", "cli-alpha", "--store", db], dir)).code).toBe(0);
    writeFileSync(join(dir, "bad.json"), "[1,");
    const before = dumpStore(db);
    const r = await cli(["run", TWO, "--workflow", "cli-alpha", "--input-file", "bad.json", "--store", db], dir);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual([expect.stringMatching(/^stead: --input-file bad\.json is not valid JSON/)]);
    expect(dumpStore(db)).toEqual(before);
  });
});

describe("stead run --detach", () => {
  it("starts the run, prints its id and the worker command, exits 0 and executes nothing; the printed worker runs it", async () => {
    const dir = tempDir();
    const db = join(dir, "s.db");
    const r = await cli(["run", APPROVAL, "--input", '{"item":"lamp"}', "--id", "d-1", "--detach", "--store", db], dir);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const out = lines(r.stdout);
    expect(out).toEqual([`run d-1 started (cli-approval), not executed here; it is pending`, `run it with: stead worker ${APPROVAL} --store ${db}`]);
    expect(rowsOf(db, "SELECT id, status, fence FROM runs")).toEqual([{ id: "d-1", status: "pending", fence: 0 }]);
    expect(rowsOf(db, "SELECT * FROM steps")).toEqual([]);
    expect(rowsOf(db, "SELECT type FROM events")).toEqual([{ type: "run.created" }]);

    // The printed command, as printed (the temp paths have no spaces).
    const printed = (out[1] ?? "").replace(/^run it with: stead /, "").split(" ");
    const worker = spawnCli([...printed, "--poll", "50"], dir);
    try {
      await until("the worker to park d-1 at its approval", () => (rowsOf(db, "SELECT status FROM runs WHERE id = 'd-1'")[0]?.status === "waiting" ? true : undefined));
    } finally {
      worker.child.kill("SIGTERM");
    }
    expect((await worker.done).code).toBe(0);
  });

  it("refuses --workspace-policy, which only a process that executes the run uses", async () => {
    const dir = tempDir();
    const r = await cli(["run", APPROVAL, "--input", '{"item":"x"}', "--detach", "--workspace-policy", "keep", "--store", join(dir, "s.db")], dir);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toEqual([expect.stringMatching(/^stead: --workspace-policy applies to the process that executes the run, and --detach executes nothing here — pass it to `stead worker` instead$/)]);
    expect(readdirSync(dir)).toEqual([]);
  });
});
