/**
 * `stead backup`: an online copy of an encrypted SQLite store taken while three worker processes
 * write to it, opened on "another machine" (a fresh directory, the source's workers killed, only
 * the key brought along) where every run continues to the results of a plain run that was never
 * backed up; the copy holds none of the runs' inputs or outputs in the clear; `--restore` into empty stores of
 * both dialects, checked from the stores' own rows; and every refusal (a taken name, a missing
 * directory, a full file system, a Postgres store, a damaged or edited backup, a non-empty
 * target), each leaving the world as it was.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createStead, localKey, PostgresStore, SqliteStore, workflow, type Store } from "../src/index.js";
import { digestStore } from "../src/store/transfer/index.js";
import { cli, FIXTURES, requireBuild, spawnCli, tempDir } from "./cli-helpers.js";
import { Sandbox, type RunToStart } from "./fixtures/crash/harness.js";
import { waitUntil } from "./helpers/waiting.js";
import { FAST_WORKER } from "./helpers/temp-store.js";
import { freshDatabase } from "./setup/postgres.js";

const WORKFLOWS = fileURLToPath(new URL("./fixtures/backup/workflows.mjs", import.meta.url));
const ROOT_USER = process.getuid?.() === 0;
/** A key directory that does not exist: the test's key is the only one. */
const KEYLESS = join(tmpdir(), `stead-backup-test-no-keys-${process.pid}`);

const RUNS = 30;
const STEPS = 25;
const starts = (): RunToStart[] => Array.from({ length: RUNS }, (_, i) => ({ id: `c${String(i).padStart(2, "0")}`, workflow: "chain", input: { seed: `seed-${i}`, steps: STEPS, delayMs: 15 } }));

const linesOf = (path: string) => (existsSync(path) ? readFileSync(path, "utf8").split("\n").filter((l) => l !== "").length : 0);

async function withStore<T>(path: string, fn: (store: SqliteStore) => Promise<T>): Promise<T> {
  const store = new SqliteStore({ path, readonly: true });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** `fn` on the store at `path` as Stead reads it, opened by the key `key` (base64) when given. */
async function withReadStore<T>(path: string, key: string | undefined, fn: (store: Store) => Promise<T>): Promise<T> {
  const stead = createStead({ store: path, readonly: true, ...(key ? { encryption: { key: localKey(Buffer.from(key, "base64"), "the test's key"), keyDir: KEYLESS } } : {}) });
  try {
    await stead.ready();
    return await fn(stead.store);
  } finally {
    await stead.close();
  }
}

/** Every run's status and output, as the store holds them. */
async function outcomes(store: Store): Promise<Record<string, { status: string; output: unknown }>> {
  const out: Record<string, { status: string; output: unknown }> = {};
  for (const { id } of starts()) {
    const run = await store.getRun(id);
    out[id] = { status: run?.status ?? "missing", output: run?.output == null ? null : (JSON.parse(run.output) as unknown) };
  }
  return out;
}

const allCompleted = (path: string, key?: string) => async () => {
  const o = await withReadStore(path, key, outcomes);
  return Object.values(o).every((r) => r.status === "completed") ? o : undefined;
};

describe("a backup taken while three workers write", () => {
  const boxes: Sandbox[] = [];
  beforeAll(() => requireBuild());
  afterEach(async () => {
    for (const b of boxes.splice(0)) {
      await b.killAll();
      b.remove();
    }
  });

  it("opens in a fresh directory, where every run continues to the results of a run that was never backed up", async () => {
    const box = new Sandbox();
    const reference = new Sandbox();
    const elsewhere = new Sandbox();
    boxes.push(box, reference, elsewhere);
    const base = { workflows: WORKFLOWS, leaseMs: 1_500, pollMs: 20, concurrency: 8 };
    const key = randomBytes(32).toString("base64");
    const keyed = { env: { STEAD_ENCRYPTION_KEY: key } };
    const writers = [box.spawn({ ...base, start: starts() }, keyed), box.spawn(base, keyed), box.spawn(base, keyed)];
    const ref = reference.spawn({ ...base, start: starts() });
    await writers[0]?.started(20_000);

    // Under load: some steps of most runs done, far from all.
    await waitUntil("150 step effects in the source", () => linesOf(box.log) >= 150, { timeoutMs: 60_000 });
    const target = join(box.dir, "backups", "stead-backup.db");
    mkdirSync(join(box.dir, "backups"));
    const before = linesOf(box.log);
    const taken = await cli(["backup", "--to", target, "--store", box.store], box.dir, keyed);
    const after = linesOf(box.log);
    expect(taken.stderr).toBe("");
    expect(taken.code).toBe(0);
    expect(taken.stdout).toContain(`to ${target}`);
    // The workers were not stopped by the backup: they kept committing steps meanwhile.
    expect(after).toBeGreaterThan(before);
    expect(readdirSync(join(box.dir, "backups"))).toEqual(["stead-backup.db"]);

    // The machine is lost: its workers die mid-run, and only the backup goes on.
    for (const w of writers) await w.kill();
    const inBackup = await withReadStore(target, key, outcomes);
    const unfinished = Object.values(inBackup).filter((r) => r.status !== "completed").length;
    expect(unfinished, "the backup was taken mid-load: runs still to finish").toBeGreaterThan(0);
    const file = readFileSync(target).toString("latin1");
    expect(file.includes("seed-1"), "a run's input in the backup's bytes").toBe(false);
    expect(file).toContain("$stead1:");

    // Another machine: nothing of the source's but the backup file, copied in as its store.
    const moved = elsewhere.store;
    copyFileSync(target, moved);
    elsewhere.spawn({ ...base, store: moved }, keyed);
    const continued = await waitUntil("every run to complete on the moved backup", allCompleted(moved, key), { timeoutMs: 90_000 });
    const expected = await waitUntil("every reference run to complete", allCompleted(reference.store), { timeoutMs: 90_000 });
    await ref.kill();
    expect(continued).toEqual(expected);
  }, 180_000);
});

const simple = workflow("simple", { version: "1" }, async (ctx, input: { n: number }) => {
  const a = await ctx.step("a", () => input.n * 2);
  const b = await ctx.step("b", () => `secret-free ${a}`);
  return { a, b };
});

/** A store with a few completed runs at `path`. */
async function seedStore(path: string, runs = 3): Promise<void> {
  const stead = createStead({ store: path });
  const w = stead.worker({ definitions: [simple], ...FAST_WORKER });
  w.start();
  try {
    for (let n = 0; n < runs; n++) await stead.runs.start(simple, { n }, { id: `s${n}` });
    for (let n = 0; n < runs; n++) await stead.runs.waitFor(`s${n}`, { timeoutMs: 20_000 });
  } finally {
    await w.stop({ graceMs: 500 });
    await stead.close();
  }
}

const sha = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

describe("stead backup --restore, and what is refused", () => {
  let dir = "";
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let store: string;
  let backup: string;
  beforeAll(async () => {
    requireBuild();
    dir = tempDir("stead-backup-");
    store = join(dir, "stead.db");
    backup = join(dir, "b1.db");
    await seedStore(store);
    const r = await cli(["backup", "--to", backup, "--store", store, "--json"], dir);
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { tables: { runs: { rows: number } } }).tables.runs.rows).toBe(3);
  }, 60_000);

  it("restores into a new SQLite file and an empty Postgres database: every table's rows as the backup holds them", async () => {
    const source = await withStore(backup, (s) => digestStore(s));
    const restored = join(dir, "restored", "stead.db");
    const r = await cli(["backup", "--restore", backup, "--store", restored], dir);
    expect(r.code, r.stderr).toBe(0);
    expect(await withStore(restored, (s) => digestStore(s))).toEqual(source);
    expect(await withStore(restored, outcomesOf(["s0", "s1", "s2"]))).toEqual(await withStore(store, outcomesOf(["s0", "s1", "s2"])));

    const db = await freshDatabase("backup-restore");
    try {
      const p = await cli(["backup", "--restore", backup, "--store", db.url], dir);
      expect(p.code, p.stderr).toBe(0);
      const pg = new PostgresStore({ connectionString: db.url });
      try {
        expect(await digestStore(pg)).toEqual(source);
      } finally {
        await pg.close();
      }
    } finally {
      await db.drop();
    }
  }, 60_000);

  it("refuses a name that is taken, a missing directory, both or neither of --to and --restore, and a Postgres store; nothing is written", async () => {
    const taken = join(dir, "taken.db");
    writeFileSync(taken, "not yours");
    const cases: { args: string[]; code: string; says: RegExp }[] = [
      { args: ["--to", taken], code: "STEAD_BAD_PATH", says: /already exists/ },
      { args: ["--to", store], code: "STEAD_BAD_PATH", says: /is the store itself/ },
      { args: ["--to", join(dir, "no-such-dir", "b.db")], code: "STEAD_BAD_PATH", says: /is not a directory/ },
      { args: ["--to", join(dir, "x.db"), "--restore", backup], code: "STEAD_BAD_OPTION", says: /do not go together/ },
      { args: [], code: "STEAD_BAD_OPTION", says: /needs --to <file> or --restore <file>/ },
    ];
    const before = sha(store);
    for (const c of cases) {
      const r = await cli(["backup", ...c.args, "--store", store, "--json"], dir);
      expect(r.code, `${c.args.join(" ")}: ${r.stderr}`).toBe(2);
      const err = (JSON.parse(r.stderr) as { error: { code: string; message: string; fix: string } }).error;
      expect(err.code).toBe(c.code);
      expect(err.message).toMatch(c.says);
      expect(err.fix.length).toBeGreaterThan(10);
    }
    expect(readFileSync(taken, "utf8")).toBe("not yours");
    expect(sha(store)).toBe(before);
    expect(existsSync(join(dir, "x.db"))).toBe(false);
    expect(readdirSync(dir).filter((f) => f.includes("partial"))).toEqual([]);

    const db = await freshDatabase("backup-pg");
    try {
      await cli(["migrate", "--store", db.url], dir);
      const r = await cli(["backup", "--to", join(dir, "pg.db"), "--store", db.url], dir);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/copies SQLite stores.*pg_dump/);
      expect(existsSync(join(dir, "pg.db"))).toBe(false);
    } finally {
      await db.drop();
    }
  }, 60_000);

  it("refuses a damaged backup, an edited one and a plain store, creating no target", async () => {
    const edited = join(dir, "edited.db");
    copyFileSync(backup, edited);
    const e = new Database(edited);
    e.prepare("UPDATE steps SET output = ? WHERE run_id = 's1' AND step_id = 'a'").run(JSON.stringify(999));
    e.close();

    const damaged = join(dir, "damaged.db");
    const bytes = readFileSync(backup);
    // Past the header and the schema's first pages: table pages overwritten with noise.
    const pageSize = bytes.readUInt16BE(16);
    for (let i = 2 * pageSize; i < bytes.length - pageSize; i += 7) bytes[i] = (i * 31) & 0xff;
    writeFileSync(damaged, bytes);

    const cases: { file: string; says: RegExp }[] = [
      { file: edited, says: /steps: the \d+ rows differ.*changed since/ },
      { file: damaged, says: /./ },
      { file: store, says: /not a backup `stead backup` wrote/ },
      { file: join(dir, "none.db"), says: /no backup file at/ },
    ];
    for (const c of cases) {
      const target = join(dir, "never", `${c.file.split("/").pop() ?? "x"}.db`);
      const r = await cli(["backup", "--restore", c.file, "--store", target, "--json"], dir);
      expect(r.code, `${c.file}: ${r.stderr}`).not.toBe(0);
      const err = (JSON.parse(r.stderr) as { error: { code: string; message: string } }).error;
      expect(err.message, c.file).toMatch(c.says);
      if (c.file === edited) expect(err.code).toBe("STEAD_BAD_BACKUP");
      expect(existsSync(join(dir, "never")), `${c.file} created a target`).toBe(false);
    }
  }, 60_000);

  it("refuses to restore onto a store that holds runs, and leaves its rows as they were", async () => {
    const other = join(dir, "other.db");
    await seedStore(other, 1);
    const before = await withStore(other, (s) => digestStore(s));
    const r = await cli(["backup", "--restore", backup, "--store", other], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/already holds runs/);
    expect(await withStore(other, (s) => digestStore(s))).toEqual(before);
  }, 60_000);
});

const outcomesOf = (ids: string[]) => async (store: SqliteStore) => {
  const out: Record<string, unknown> = {};
  for (const id of ids) {
    const run = await store.getRun(id);
    out[id] = { status: run?.status, output: run?.output };
  }
  return out;
};

describe.skipIf(!ROOT_USER)("a backup onto a full file system (a tmpfs; needs root to mount)", () => {
  let dir = "";
  let mount: string | undefined;
  afterEach(() => {
    if (mount) execFileSync("umount", ["-l", mount]);
    mount = undefined;
    rmSync(dir, { recursive: true, force: true });
  });
  it("is refused before anything is written there, and the store is unchanged", async () => {
    requireBuild();
    dir = tempDir("stead-backup-full-");
    const store = join(dir, "stead.db");
    await seedStore(store, 2);
    // Big enough that its copy cannot fit in 1 MiB.
    const s = new Database(store);
    s.prepare("CREATE TABLE IF NOT EXISTS ballast (b BLOB)").run();
    s.prepare("INSERT INTO ballast VALUES (?)").run(Buffer.alloc(3 * 1024 * 1024, 7));
    s.close();
    mount = join(dir, "fs");
    mkdirSync(mount);
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mount]);
    const before = sha(store);
    const r = await cli(["backup", "--to", join(mount, "b.db"), "--store", store, "--json"], dir);
    expect(r.code).toBe(2);
    const err = (JSON.parse(r.stderr) as { error: { code: string; message: string } }).error;
    expect(err.code).toBe("STEAD_BAD_PATH");
    expect(err.message).toMatch(/no room for the backup/);
    expect(readdirSync(mount)).toEqual([]);
    expect(sha(store)).toBe(before);
  }, 60_000);
});

describe("stead worker --backup-dir", () => {
  let dir = "";
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("takes a backup every period while it works, keeps the newest --backup-keep, and each one restores", async () => {
    requireBuild();
    dir = tempDir("stead-backup-every-");
    const store = join(dir, "stead.db");
    await seedStore(store, 2);
    const backups = join(dir, "backups");
    mkdirSync(backups);
    writeFileSync(join(backups, "notes.txt"), "not a backup: never pruned");
    const worker = spawnCli(["worker", join(FIXTURES, "two.ts"), "--poll", "50", "--store", store, "--backup-dir", backups, "--backup-every", "500ms", "--backup-keep", "2"], dir, { timeoutMs: 60_000 });
    try {
      await waitUntil("three backups taken", () => (worker.stdout().match(/backup taken: /g) ?? []).length >= 3, { timeoutMs: 30_000 });
    } finally {
      worker.child.kill("SIGTERM");
    }
    const done = await worker.done;
    expect(done.code, done.stderr).toBe(0);
    const kept = readdirSync(backups).sort();
    expect(kept.filter((n) => n !== "notes.txt")).toHaveLength(2);
    expect(kept).toContain("notes.txt");
    for (const name of kept.filter((n) => n !== "notes.txt")) {
      expect(name).toMatch(/^stead-backup-.*Z\.db$/);
      const r = await cli(["backup", "--restore", join(backups, name), "--store", join(dir, `from-${name}`)], dir);
      expect(r.code, r.stderr).toBe(0);
      expect(await withStore(join(dir, `from-${name}`), (st) => st.getRun("s1").then((run) => run?.status))).toBe("completed");
    }
  }, 60_000);

  it("refuses a schedule without a directory, a directory that is not there, and too short a period, before it opens the store", async () => {
    dir ||= tempDir("stead-backup-every-");
    const store = join(dir, "never.db");
    const cases: { args: string[]; says: RegExp }[] = [
      { args: ["--backup-every", "1h"], says: /--backup-every needs --backup-dir/ },
      { args: ["--backup-dir", join(dir, "missing")], says: /is not a directory/ },
      { args: ["--backup-dir", dir, "--backup-every", "10ms"], says: /shorter than/ },
      { args: ["--backup-dir", dir, "--backup-keep", "0"], says: /--backup-keep/ },
    ];
    for (const c of cases) {
      const r = await cli(["worker", join(FIXTURES, "two.ts"), "--store", store, ...c.args], dir);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(c.says);
    }
    expect(existsSync(store)).toBe(false);
  }, 60_000);
});
