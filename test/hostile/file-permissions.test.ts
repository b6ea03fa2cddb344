/**
 * Issue 39, item 13: what Stead writes to disk is for its owner alone, whatever the umask. Under
 * umask 022 (files 0644, directories 0755 by default) the store file, its -wal, -shm and reserve,
 * backups, exports and an import's new store are created 0600, and the directories Stead creates
 * for them 0700. A key file that other users may read is refused, naming the file and the fix,
 * unless the user says to use it anyway (STEAD_ALLOW_READABLE_KEY_FILE=1).
 */
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, FIXTURES, requireBuild, spawnCli, tempDir } from "../cli-helpers.js";
import { waitUntil } from "../helpers/waiting.js";
import { freshDatabase } from "../setup/postgres.js";

const ECHO = join(FIXTURES, "first-start.ts");
const TWO = join(FIXTURES, "two.ts");
const UMASK = { umask: "022" };

const modeOf = (path: string): string => (statSync(path).mode & 0o777).toString(8).padStart(4, "0");

/** Each path's mode, as octal text. */
const modes = (paths: readonly string[]): Record<string, string> => Object.fromEntries(paths.map((p) => [p, modeOf(p)]));
const all = (paths: readonly string[], mode: string): Record<string, string> => Object.fromEntries(paths.map((p) => [p, mode]));

describe.skipIf(process.platform === "win32")("files Stead creates, under umask 022", () => {
  let dir = "";
  beforeAll(() => {
    requireBuild();
    dir = tempDir("stead-perms-");
    chmodSync(dir, 0o755);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("a new store's directory is 0700; the store, its -wal, -shm and reserve are 0600, while a worker has it open and after", async () => {
    const work = join(dir, "project");
    mkdirSync(work);
    const store = join(work, ".stead", "stead.db");
    const worker = spawnCli(["worker", TWO, "--poll", "50"], work, { ...UMASK, timeoutMs: 60_000 });
    try {
      await waitUntil("the worker's store and its -wal and -shm", () => ["", "-wal", "-shm", "-reserve"].every((s) => existsSync(`${store}${s}`)), { timeoutMs: 30_000 });
      const files = ["", "-wal", "-shm", "-reserve"].map((s) => `${store}${s}`);
      expect(modes(files)).toEqual(all(files, "0600"));
      expect(modeOf(join(work, ".stead"))).toBe("0700");
    } finally {
      worker.child.kill("SIGTERM");
      await worker.done;
    }
    const run = await cli(["run", ECHO, "--input", '"hello"'], work, UMASK);
    expect(run.code, run.stderr).toBe(0);
    const left = readdirSync(join(work, ".stead")).map((f) => join(work, ".stead", f));
    expect(modes(left)).toEqual(all(left, "0600"));
  }, 60_000);

  it("--store in a new directory: each directory Stead creates is 0700", async () => {
    const store = join(dir, "deep", "er", "stead.db");
    const r = await cli(["run", ECHO, "--input", "1", "--store", store], dir, UMASK);
    expect(r.code, r.stderr).toBe(0);
    expect(modes([join(dir, "deep"), join(dir, "deep", "er")])).toEqual(all([join(dir, "deep"), join(dir, "deep", "er")], "0700"));
    expect(modeOf(store)).toBe("0600");
  });

  it("a backup, an export and the store an import creates are 0600", async () => {
    const store = join(dir, "source", "stead.db");
    expect((await cli(["run", ECHO, "--input", '"x"', "--store", store], dir, UMASK)).code).toBe(0);
    const backup = join(dir, "backup.db");
    const dump = join(dir, "all.dump");
    const imported = join(dir, "imported.db");
    const restored = join(dir, "restored.db");
    for (const args of [
      ["backup", "--to", backup, "--store", store],
      ["export", "--out", dump, "--store", store],
      ["import", dump, "--store", imported],
      ["backup", "--restore", backup, "--store", restored],
    ]) {
      const r = await cli(args, dir, UMASK);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
    }
    expect(modes([backup, dump, imported, restored])).toEqual(all([backup, dump, imported, restored], "0600"));
  }, 60_000);

  it("an export of a Postgres store is 0600", async () => {
    const db = await freshDatabase("perm-export");
    try {
      expect((await cli(["run", ECHO, "--input", '"pg"', "--store", db.url], dir, UMASK)).code).toBe(0);
      const dump = join(dir, "pg.dump");
      const r = await cli(["export", "--out", dump, "--store", db.url], dir, UMASK);
      expect(r.code, r.stderr).toBe(0);
      expect(modeOf(dump)).toBe("0600");
    } finally {
      await db.drop();
    }
  }, 60_000);
});

describe.skipIf(process.platform === "win32")("a key file other users may read", () => {
  let dir = "";
  let keyFile = "";
  const key = `stead-key-v1 ${randomBytes(32).toString("base64")}\n`;
  beforeAll(() => {
    requireBuild();
    dir = tempDir("stead-key-perms-");
    keyFile = join(dir, "store.key");
    writeFileSync(keyFile, key, { mode: 0o600 });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const env = (extra: Record<string, string> = {}) => ({ STEAD_ENCRYPTION_KEY_FILE: keyFile, STEAD_KEY_DIR: join(dir, "no-keys"), ...extra });

  it.each(["0644", "0640", "0604"])("mode %s is refused, naming the file and chmod 600; nothing is created", async (mode) => {
    chmodSync(keyFile, parseInt(mode, 8));
    const store = join(dir, `refused-${mode}`, "stead.db");
    const r = await cli(["run", ECHO, "--input", "1", "--store", store], dir, { env: env() });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(keyFile);
    expect(r.stderr).toContain(mode);
    expect(r.stderr).toContain(`chmod 600 ${keyFile}`);
    expect(r.stderr).toContain("STEAD_ALLOW_READABLE_KEY_FILE");
    expect(existsSync(join(dir, `refused-${mode}`))).toBe(false);
    // The same refusal as JSON, from a verb that prints it so.
    const ps = await cli(["ps", "--json", "--store", store], dir, { env: env() });
    expect(ps.code).toBe(2);
    expect((JSON.parse(ps.stderr) as { error: { code: string } }).error.code).toBe("STEAD_KEY_EXPOSED");
  });

  it("a key file found in the key directory is refused the same way", async () => {
    const keys = join(dir, "keys");
    mkdirSync(keys);
    chmodSync(keyFile, 0o600);
    const store = join(dir, "in-dir", "stead.db");
    const made = await cli(["run", ECHO, "--input", "1", "--store", store], dir, { env: env() });
    expect(made.code, made.stderr).toBe(0);
    const status = await cli(["keys", "status", "--json", "--store", store], dir, { env: env() });
    const kekId = (JSON.parse(status.stdout) as { keys: { kekId: string }[] }).keys[0]?.kekId ?? "";
    const inDir = join(keys, `${kekId}.key`);
    writeFileSync(inDir, key, { mode: 0o644 });
    chmodSync(inDir, 0o644);
    const r = await cli(["ps", "--store", store], dir, { env: { STEAD_KEY_DIR: keys } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(inDir);
    expect(r.stderr).toContain("chmod 600");
  });

  it("STEAD_ALLOW_READABLE_KEY_FILE=1 uses it anyway", async () => {
    chmodSync(keyFile, 0o644);
    const store = join(dir, "allowed", "stead.db");
    const r = await cli(["run", ECHO, "--input", "1", "--store", store], dir, { env: env({ STEAD_ALLOW_READABLE_KEY_FILE: "1" }) });
    expect(r.code, r.stderr).toBe(0);
    const ps = await cli(["ps", "--store", store], dir, { env: env({ STEAD_ALLOW_READABLE_KEY_FILE: "1" }) });
    expect(ps.code, ps.stderr).toBe(0);
  });
});
