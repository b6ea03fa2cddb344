/**
 * A store the user may only read, or may not write: read verbs open it read-only (no migration, no
 * WAL switch) and work where SQLite can read it; where it cannot, and for every verb that writes,
 * the CLI exits 2 with one line naming the path and the permission needed. Never "not a Stead
 * store", never "internal error" for a permission problem.
 *
 * Root bypasses file permissions: run as root (as here), the CLI is spawned as `nobody`. As any
 * other user, it runs as that user, whom chmod binds. A read-only file system is a read-only bind
 * mount, made when this process may mount (root); otherwise those cases are skipped, saying why.
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStead, workflow, type Stead } from "../src/index.js";
import { MIGRATIONS as PG_MIGRATIONS } from "../src/store/postgres/migrations.js";
import { MIGRATIONS } from "../src/store/sqlite/index.js";
import { BIN, cli, dumpStore, FIXTURES, lines, requireBuild, ROOT, tempDir, type CliResult } from "./cli-helpers.js";
import { withClient } from "./setup/databases.js";
import { freshDatabase } from "./setup/postgres.js";

const FIRST_START = join(FIXTURES, "first-start.ts");
const IS_ROOT = process.getuid?.() === 0;
const NOBODY = { uid: 65534, gid: 65534 };

/** Why the CLI cannot be run as a user bound by file permissions here, or undefined. */
function permissionsUntestable(): string | undefined {
  if (process.platform === "win32") return "POSIX file permissions are not available on Windows";
  if (!IS_ROOT) return undefined;
  const r = spawnSync(process.execPath, ["-e", "process.exit(process.getuid() === 65534 ? 0 : 1)"], { ...NOBODY, stdio: "ignore" });
  if (r.status !== 0) return "running as root, and a process cannot be started as nobody (uid 65534) to be bound by file permissions";
  // A checkout inside a directory only root may enter (mktemp -d makes one) cannot be loaded by nobody at all.
  const reach = spawnSync(process.execPath, ["-e", `require("fs").accessSync(${JSON.stringify(BIN)}, require("fs").constants.R_OK)`], { ...NOBODY, stdio: "ignore" });
  return reach.status === 0 ? undefined : `running as root, and nobody (uid 65534) cannot read the CLI at ${BIN} (a directory above it is closed to other users)`;
}
const UNTESTABLE = permissionsUntestable();

/** The CLI as a user bound by file permissions (nobody when this process is root). */
function cliAsUser(args: readonly string[], cwd: string): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("STEAD_")) env[k] = v;
  // The store is shared with this reader on purpose: run as its owner (not root), the CLI would warn that others may read it.
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...env, USER: "reader", HOME: cwd, STEAD_ALLOW_READABLE_STORE: "1" }, stdio: ["ignore", "pipe", "pipe"], ...(IS_ROOT ? NOBODY : {}) });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const guard = setTimeout(() => child.kill("SIGKILL"), 30_000);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(guard);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

const approvalFlow = workflow("perm-approval", async (ctx) => {
  await ctx.step("prepare", () => "prepared");
  return ctx.approval("ship");
});
const done = workflow("perm-done", async (ctx) => ctx.step("only", () => "done"));
const edits = workflow("perm-edits", async (ctx, root: string) => {
  await ctx.step("write-a", { effect: true }, () => writeFileSync(join(root, "a.txt"), "a"));
  await ctx.step("write-b", { effect: true }, () => writeFileSync(join(root, "b.txt"), "b"));
  return "edited";
});

/** A store with a waiting run w1, a completed run c1 and a run ws1 with workspace snapshots; closed. */
async function seedStore(path: string, workspace: string): Promise<void> {
  const stead = createStead({ store: path });
  try {
    expect((await stead.run(approvalFlow, null, { id: "w1", pollMs: 20 })).status).toBe("waiting");
    expect((await stead.run(done, null, { id: "c1", pollMs: 20 })).status).toBe("completed");
    mkdirSync(workspace, { recursive: true });
    expect((await stead.run(edits, workspace, { id: "ws1", pollMs: 20, workspace })).status).toBe("completed");
  } finally {
    await stead.close();
  }
}

const sha = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

/** One stderr line, not a misreport of a permission problem. */
function refusal(r: CliResult): string {
  expect(r.code).toBe(2);
  expect(lines(r.stderr)).toHaveLength(1);
  expect(r.stderr).not.toMatch(/internal error|not a Stead store|EACCES/);
  return r.stderr.trim();
}

const READ_VERBS: [string, string[]][] = [
  ["ps", ["ps"]],
  ["status", ["status", "w1"]],
  ["why", ["why", "w1"]],
  ["logs", ["logs", "w1"]],
  ["holds", ["holds"]],
  ["sessions", ["sessions"]],
  ["snapshots", ["snapshots", "ws1"]],
  ["diff", ["diff", "ws1", "write-a", "write-b"]],
  ["export", ["export"]],
];

describe.skipIf(UNTESTABLE !== undefined)(`a store this user may only read${UNTESTABLE ? ` (skipped: ${UNTESTABLE})` : ""}`, () => {
  let dir: string;
  let storeDir: string;
  let store: string;
  let dump: string;

  beforeAll(async () => {
    requireBuild();
    dir = tempDir("stead-perm-");
    chmodSync(dir, 0o755);
    storeDir = join(dir, "store");
    mkdirSync(storeDir);
    store = join(storeDir, "stead.db");
    await seedStore(store, join(dir, "ws"));
    dump = join(dir, "all.dump");
    const exported = await cli(["export", "--store", store, "--out", dump], dir);
    expect(exported.code).toBe(0);
    // A read-only connection cannot remove the -wal and -shm files it made; nothing has the store open now.
    // Nor the reserve a worker set aside for a full disk: this suite is about the store file alone.
    for (const f of ["stead.db-wal", "stead.db-shm", "stead.db-reserve"]) rmSync(join(storeDir, f), { force: true });
    chmodSync(dump, 0o644);
    // The user may read the file and the directory, and write neither.
    chmodSync(store, 0o444);
    chmodSync(storeDir, 0o555);
    expect(readdirSync(storeDir)).toEqual(["stead.db"]);
  });

  afterAll(() => {
    if (!dir) return;
    chmodSync(storeDir, 0o755);
    rmSync(dir, { recursive: true, force: true });
  });

  describe("while a process that writes it has it open (its -wal and -shm files exist)", () => {
    let writer: Stead;
    beforeAll(async () => {
      chmodSync(storeDir, 0o755);
      chmodSync(store, 0o644);
      writer = createStead({ store });
      await writer.ready();
      chmodSync(store, 0o444);
      chmodSync(storeDir, 0o555);
      expect(readdirSync(storeDir).sort()).toEqual(["stead.db", "stead.db-shm", "stead.db-wal"]);
    });
    afterAll(() => writer.close());

    it.each(READ_VERBS)("stead %s reads it and changes nothing", async (_verb, args) => {
      const before = dumpStore(store);
      const r = await cliAsUser([...args, "--store", store], dir);
      expect(r.code).toBe(0);
      // An export to standard output reports its summary on standard error.
      expect(r.stderr).toMatch(args[0] === "export" ? /^exported [^\n]+\n$/ : /^$/);
      expect(r.stdout.length).toBeGreaterThan(0);
      expect(dumpStore(store)).toEqual(before);
      expect(readdirSync(storeDir).sort()).toEqual(["stead.db", "stead.db-shm", "stead.db-wal"]);
    });

    it("stead ps shows its runs; stead export writes a whole dump", async () => {
      const ps = await cliAsUser(["ps", "--json", "--store", store], dir);
      expect((JSON.parse(ps.stdout) as { id: string }[]).map((r) => r.id).sort()).toEqual(["c1", "w1", "ws1"]);
      const exp = await cliAsUser(["export", "--store", store], dir);
      expect(lines(exp.stdout).at(-1)).toContain("stead-export-end");
    });
  });

  it("with no -wal and -shm files and a directory it cannot write, a read verb says what SQLite needs, naming the directory", async () => {
    expect(readdirSync(storeDir)).toEqual(["stead.db"]);
    const hash = sha(store);
    for (const args of [["ps"], ["status", "w1"], ["export"]]) {
      const line = refusal(await cliAsUser([...args, "--store", store], dir));
      expect(line).toContain(storeDir);
      expect(line).toMatch(/write permission on the directory/);
      expect(line).toContain("stead.db-wal");
    }
    expect(sha(store)).toBe(hash);
    expect(readdirSync(storeDir)).toEqual(["stead.db"]);
  });

  it("a store file it cannot read is refused naming the file and the read permission", async () => {
    const hidden = join(dir, "hidden");
    mkdirSync(hidden, { mode: 0o755 });
    const path = join(hidden, "stead.db");
    writeFileSync(path, readFileSync(store));
    chmodSync(path, 0o600);
    chmodSync(hidden, 0o777);
    const line = refusal(await cliAsUser(["ps", "--store", path], dir));
    expect(line).toContain(path);
    expect(line).toMatch(/read permission/);
    const write = refusal(await cliAsUser(["cancel", "w1", "--store", path], dir));
    expect(write).toContain(path);
  });

  const WRITE_VERBS: [string, () => string[]][] = [
    ["run", () => ["run", FIRST_START]],
    ["worker", () => ["worker", FIRST_START]],
    ["approve", () => ["approve", "w1", "ship"]],
    ["deny", () => ["deny", "w1", "ship", "--reason", "no"]],
    ["signal", () => ["signal", "w1", "go"]],
    ["release", () => ["release", "w1", "--choice", "retry"]],
    ["pause", () => ["pause", "w1"]],
    ["resume", () => ["resume", "w1"]],
    ["cancel", () => ["cancel", "w1"]],
    ["fork", () => ["fork", "c1"]],
    ["send", () => ["send", "s1", "hello"]],
    ["migrate", () => ["migrate"]],
    ["import", () => ["import", dump]],
    ["gc", () => ["gc"]],
  ];

  it.each(WRITE_VERBS)("stead %s exits 2 with one line naming the store file and the write permission, and changes nothing", async (_verb, args) => {
    const before = dumpStore(store);
    const line = refusal(await cliAsUser([...args(), "--store", store], dir));
    expect(line).toContain(store);
    expect(line).toMatch(/write permission/);
    expect(dumpStore(store)).toEqual(before);
    expect(readdirSync(storeDir)).toEqual(["stead.db"]);
  });

  it("a writable store file in a directory it cannot write: a write verb names the directory", async () => {
    chmodSync(store, 0o666);
    try {
      const line = refusal(await cliAsUser(["cancel", "w1", "--store", store], dir));
      expect(line).toContain(storeDir);
      expect(line).toMatch(/write permission on the directory/);
    } finally {
      chmodSync(store, 0o444);
    }
  });

  it("a new store where it cannot create one: exit 2 naming the directory, nothing created", async () => {
    const locked = join(dir, "locked");
    mkdirSync(locked, { mode: 0o555 });
    chmodSync(locked, 0o555);
    const here = refusal(await cliAsUser(["run", FIRST_START], locked));
    expect(here).toContain(locked);
    expect(here).toMatch(/write permission/);
    const deeper = refusal(await cliAsUser(["migrate", "--store", join(locked, "a", "b", "stead.db")], dir));
    expect(deeper).toContain(locked);
    expect(readdirSync(locked)).toEqual([]);
  });
});

describe("a store whose schema is older than this Stead's", () => {
  it("read verbs refuse it naming `stead migrate` and change nothing; after stead migrate they read it (SQLite)", async () => {
    requireBuild();
    const dir = tempDir("stead-old-");
    try {
      const path = join(dir, "old.db");
      const db = new Database(path);
      db.pragma("journal_mode = WAL");
      db.exec("CREATE TABLE stead_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); CREATE TABLE stead_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL);");
      db.prepare("INSERT INTO stead_meta (key, value) VALUES ('marker', 'stead-store')").run();
      for (const m of MIGRATIONS.slice(0, -1)) {
        db.exec(m.sql);
        db.prepare("INSERT INTO stead_migrations (version, name, applied_at) VALUES (?, ?, 0)").run(m.version, m.name);
      }
      db.close();
      // Private, as Stead makes a store (one other users may read is warned about: legacy-store-modes).
      chmodSync(path, 0o600);
      const hash = sha(path);
      for (const args of [["ps"], ["export"], ["why", "x"]]) {
        const line = refusal(await cli([...args, "--store", path], dir));
        expect(line).toMatch(/schema version \d+/);
        expect(line).toContain("stead migrate");
      }
      expect(sha(path)).toBe(hash);
      expect(existsSync(`${path}-wal`) ? readFileSync(`${path}-wal`).length : 0).toBe(0);
      expect((await cli(["migrate", "--store", path], dir)).code).toBe(0);
      expect(await cli(["ps", "--store", path], dir)).toMatchObject({ code: 0, stderr: "" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("read verbs refuse it naming `stead migrate` and apply no migration (Postgres)", async () => {
    requireBuild();
    const pg = await freshDatabase("perm-old-schema");
    try {
      await withClient(pg.url, async (c) => {
        await c.query("CREATE TABLE stead_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); CREATE TABLE stead_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)");
        await c.query("INSERT INTO stead_meta (key, value) VALUES ('marker', 'stead-store')");
        for (const m of PG_MIGRATIONS.slice(0, -1)) {
          await c.query(m.sql);
          await c.query("INSERT INTO stead_migrations (version, name, applied_at) VALUES ($1, $2, 0)", [m.version, m.name]);
        }
      });
      const versions = () => withClient(pg.url, async (c) => (await c.query<{ version: number }>("SELECT version FROM stead_migrations ORDER BY version")).rows);
      const before = await versions();
      const line = refusal(await cli(["ps", "--store", pg.url], ROOT));
      expect(line).toContain("stead migrate");
      expect(await versions()).toEqual(before);
    } finally {
      await pg.drop();
    }
  });
});

/** Whether this process may bind-mount (root, with the capability). */
function mountUnavailable(): string | undefined {
  if (process.platform !== "linux") return "read-only bind mounts are a Linux test here";
  if (!IS_ROOT) return "making a read-only file system (a bind mount) needs root";
  const probe = tempDir("stead-mount-probe-");
  const target = tempDir("stead-mount-probe-ro-");
  try {
    const r = spawnSync("mount", ["--bind", probe, target], { stdio: "ignore" });
    if (r.status !== 0) return "mount --bind is not permitted in this environment";
    spawnSync("umount", [target], { stdio: "ignore" });
    return undefined;
  } finally {
    rmSync(probe, { recursive: true, force: true });
    rmSync(target, { recursive: true, force: true });
  }
}
const NO_MOUNT = mountUnavailable();

describe.skipIf(NO_MOUNT !== undefined)(`a store on a read-only file system${NO_MOUNT ? ` (skipped: ${NO_MOUNT})` : ""}`, () => {
  let dir: string;
  let source: string;
  let ro: string;
  let mounted = false;

  beforeAll(async () => {
    requireBuild();
    dir = tempDir("stead-rofs-");
    source = join(dir, "source");
    ro = join(dir, "ro");
    mkdirSync(source);
    mkdirSync(ro);
    await seedStore(join(source, "stead.db"), join(dir, "ws"));
    expect(spawnSync("mount", ["--bind", source, ro]).status).toBe(0);
    mounted = true;
    expect(spawnSync("mount", ["-o", "remount,bind,ro", ro]).status).toBe(0);
  });

  afterAll(() => {
    if (mounted) spawnSync("umount", [ro]);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("a write verb exits 2 naming the read-only file system; a read verb says SQLite cannot create its -wal and -shm files there", async () => {
    const store = join(ro, "stead.db");
    const w = refusal(await cli(["cancel", "w1", "--store", store], dir));
    expect(w).toContain("read-only file system");
    expect(w).toContain(ro);
    const r = refusal(await cli(["ps", "--store", store], dir));
    expect(r).toContain("read-only file system");
    expect(r).toContain("stead.db-wal");
  });

  it("while a writer has it open through a writable path, read verbs read it through the read-only one", async () => {
    const writer = createStead({ store: join(source, "stead.db") });
    try {
      await writer.ready();
      const ps = await cli(["ps", "--json", "--store", join(ro, "stead.db")], dir);
      expect(ps.stderr).toBe("");
      expect((JSON.parse(ps.stdout) as { id: string }[]).map((x) => x.id).sort()).toEqual(["c1", "w1", "ws1"]);
      const why = await cli(["why", "w1", "--store", join(ro, "stead.db")], dir);
      expect({ code: why.code, stderr: why.stderr }).toEqual({ code: 0, stderr: "" });
    } finally {
      await writer.close();
    }
  });
});
