/**
 * Definitions known without loading user code, through real processes on a real SQLite store: a
 * `stead worker` announces what it serves, other processes (which load no module) list it and
 * start runs of it by name, and a SIGKILLed worker stops counting as alive once its
 * announcement's bound (its lease length, at least 10 s) has passed.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { cli, dumpStore, FIXTURES, lines, requireBuild, spawnCli, tempDir, until, type CliProcess, type StatusJson } from "./cli-helpers.js";

const SERVED = join(FIXTURES, "served.ts");

beforeAll(() => requireBuild());

interface Listed {
  name: string;
  kind: string;
  served: boolean;
  fingerprints: string[];
  inputSchema: { type?: string; properties?: Record<string, { type?: string }>; required?: string[] } | null;
  module: string | null;
  workers: { workerId: string; host: string; pid: number; fingerprint: string; since: number }[];
}

/** Rows of the store file, read with a connection of this test's own. */
function rows(db: string, sql: string, ...params: unknown[]): Record<string, unknown>[] {
  const file = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return file.prepare(sql).all(...params) as Record<string, unknown>[];
  } finally {
    file.close();
  }
}

async function listed(dir: string, db: string): Promise<Listed[]> {
  const r = await cli(["definitions", "--json", "--store", db], dir);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as Listed[];
}

const named = (all: Listed[], name: string): Listed | undefined => all.find((d) => d.name === name);

async function startWorker(db: string, dir: string): Promise<CliProcess> {
  const w = spawnCli(["worker", SERVED, "--lease", "2s", "--poll", "50", "--store", db], dir);
  await until("the worker to start", () => (w.stdout().includes(" started: cli-fixer, cli-plain") ? true : undefined));
  return w;
}

describe("stead definitions: what live workers serve, from the store alone", () => {
  it("lists a worker's definitions with its pid and input schema; a SIGKILLed worker stops counting once the bound passes; a stopped one at once", async () => {
    const dir = tempDir();
    const db = join(dir, "s.db");
    const worker = await startWorker(db, dir);
    // This process loads no module: `dir` holds only the store, and no file is named.
    const live = await until("the worker's announcement", async () => {
      const d = named(await listed(dir, db), "cli-fixer");
      return d?.served ? d : undefined;
    });
    expect(live).toMatchObject({ kind: "workflow", served: true, module: SERVED });
    expect(live.workers).toEqual([expect.objectContaining({ pid: worker.child.pid, host: expect.any(String) as string })]);
    expect(live.fingerprints).toEqual([expect.stringMatching(/^[0-9a-f]{16}$/)]);
    expect(live.workers[0]?.fingerprint).toBe(live.fingerprints[0]);
    expect(live.inputSchema?.properties?.issue?.type).toBe("string");
    expect(live.inputSchema?.required).toEqual(["issue"]);
    const plain = named(await listed(dir, db), "cli-plain");
    expect(plain).toMatchObject({ served: true, inputSchema: null });

    const table = await cli(["definitions", "--store", db], dir);
    expect(table.code).toBe(0);
    const [header, ...body] = lines(table.stdout);
    expect(header?.split(/\s{2,}/)).toEqual(["NAME", "KIND", "WORKERS", "FINGERPRINT", "INPUT SCHEMA", "LAST SEEN"]);
    expect(body.find((l) => l.startsWith("cli-fixer"))?.split(/\s{2,}/).slice(0, 5)).toEqual(["cli-fixer", "workflow", "1", live.fingerprints[0]?.slice(0, 8), "yes"]);
    expect(body.find((l) => l.startsWith("cli-plain"))?.split(/\s{2,}/)[4]).toBe("no");

    worker.child.kill("SIGKILL");
    expect((await worker.done).signal).toBe("SIGKILL");
    const dead = await until("the killed worker to count as gone", async () => {
      const d = named(await listed(dir, db), "cli-fixer");
      return d && !d.served ? d : undefined;
    });
    expect(dead.workers).toEqual([]);
    // Nobody removed the killed worker's announcement: the bound judged it (its time passed), and
    // the definition stays known, with its schema, for starts by name.
    const left = rows(db, "SELECT name, pid, expires_at FROM announcements WHERE pid = ?", worker.child.pid);
    expect(left.map((r) => r.name).sort()).toEqual(["cli-fixer", "cli-plain"]);
    for (const r of left) expect(Number(r.expires_at)).toBeLessThanOrEqual(Date.now());
    expect(dead.inputSchema?.required).toEqual(["issue"]);

    const second = await startWorker(db, dir);
    await until("the second worker's announcement", async () => (named(await listed(dir, db), "cli-fixer")?.workers.some((w) => w.pid === second.child.pid) ? true : undefined));
    second.child.kill("SIGTERM");
    const stopped = await second.done;
    expect(stopped.code).toBe(0);
    // A graceful stop withdraws the announcement before the process exits.
    expect(rows(db, "SELECT name FROM announcements WHERE pid = ?", second.child.pid)).toEqual([]);
    expect(named(await listed(dir, db), "cli-fixer")).toMatchObject({ served: false, workers: [] });
  });
});

describe("stead start <name>: a run by name, with no module loaded", () => {
  it("refuses invalid input with nothing written, starts a valid one pending (served: false), and a worker runs it", async () => {
    const dir = tempDir();
    const db = join(dir, "s.db");
    const store = ["--store", db];
    const first = await startWorker(db, dir);
    await until("the announcement", async () => (named(await listed(dir, db), "cli-fixer")?.served ? true : undefined));
    first.child.kill("SIGTERM");
    expect((await first.done).code).toBe(0);

    // No worker now: the store holds still, so a refusal can be compared row for row.
    const before = dumpStore(db);
    for (const [input, problem] of [
      ['{"issue": 5}', /: \/issue: must be string/],
      ['{"priority": 2}', /: \/issue: is required/],
      ['{"issue": "x", "priority": 9}', /: \/priority: must be <= 5/],
    ] as const) {
      const r = await cli(["start", "cli-fixer", "--input", input, ...store], dir);
      expect(r.code).toBe(2);
      const err = lines(r.stderr);
      expect(err).toHaveLength(1);
      expect(err[0]).toMatch(/^stead: the input of "cli-fixer" does not match its input schema: /);
      expect(err[0]).toMatch(problem);
      expect(dumpStore(db)).toEqual(before);
    }
    const unknown = await cli(["start", "cli-fixr", "--input", "{}", ...store], dir);
    expect(unknown.code).toBe(2);
    expect(lines(unknown.stderr)).toEqual([expect.stringMatching(/^stead: no worker has announced a definition named "cli-fixr".*stead worker <file>/)]);
    expect(dumpStore(db)).toEqual(before);
    const badJson = await cli(["start", "cli-fixer", "--input", '{"issue": 5}', "--json", ...store], dir);
    expect(JSON.parse(lines(badJson.stderr)[0] ?? "{}")).toMatchObject({ error: { code: "STEAD_SCHEMA_MISMATCH" } });
    expect(dumpStore(db)).toEqual(before);

    const waiting = await cli(["start", "cli-fixer", "--input", '{"issue": "parser", "priority": 1}', "--id", "by-name-1", "--json", ...store], dir);
    expect(waiting.code).toBe(0);
    expect(JSON.parse(waiting.stdout)).toEqual({ id: "by-name-1", already: false, served: false, workers: 0 });
    const [run] = rows(db, "SELECT status, definition, fingerprint, input FROM runs WHERE id = 'by-name-1'");
    expect(run).toEqual({ status: "pending", definition: "cli-fixer", fingerprint: null, input: '{"issue":"parser","priority":1}' });
    const said = await cli(["start", "cli-fixer", "--input", '{"issue": "lexer"}', "--id", "by-name-2", ...store], dir);
    expect(said.code).toBe(0);
    expect(lines(said.stdout)[0]).toMatch(/^run by-name-2 started \(cli-fixer\), pending: no live worker serves cli-fixer now; it waits until one does/);

    const worker = await startWorker(db, dir);
    try {
      for (const [id, output] of [
        ["by-name-1", "fixed parser at priority 1"],
        ["by-name-2", "fixed lexer at priority 3"],
      ] as const) {
        const done = await until(`${id} to complete`, async () => {
          const s = JSON.parse((await cli(["status", id, "--json", ...store], dir)).stdout) as StatusJson;
          return s.run.status === "completed" ? s : undefined;
        });
        expect(done.run.output).toBe(output);
      }
      expect(rows(db, "SELECT fingerprint FROM runs WHERE id = 'by-name-1'")[0]?.fingerprint).toMatch(/^[0-9a-f]{16}$/);
      await until("the worker's announcement", async () => (named(await listed(dir, db), "cli-fixer")?.served ? true : undefined));
      const served = await cli(["start", "cli-fixer", "--input", '{"issue": "now"}', "--id", "by-name-3", "--json", ...store], dir);
      expect(JSON.parse(served.stdout)).toEqual({ id: "by-name-3", already: false, served: true, workers: 1 });
      const done = await until("by-name-3 to complete", async () => {
        const s = JSON.parse((await cli(["status", "by-name-3", "--json", ...store], dir)).stdout) as StatusJson;
        return s.run.status === "completed" ? s : undefined;
      });
      expect(done.run.output).toBe("fixed now at priority 3");
    } finally {
      worker.child.kill("SIGTERM");
      await worker.done;
    }
  });
});
