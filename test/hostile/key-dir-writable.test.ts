/**
 * Review 2 (item 13, smaller): a key directory every user may write (0777) was used without a
 * word. Whoever may write it can remove a store's key (every value of the store lost with it) or
 * put another file in its place; a key file others may read is refused (STEAD_KEY_EXPOSED), and
 * such a directory is refused the same way, with the same override. A sticky directory (/tmp's
 * 1777) lets others remove only their own files: it is used.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, FIXTURES, requireBuild, tempDir } from "../cli-helpers.js";

const ECHO = join(FIXTURES, "first-start.ts");

describe.skipIf(process.platform === "win32")("a key directory other users may write", () => {
  let dir = "";
  let keys = "";
  let store = "";
  let keyFile = "";

  beforeAll(async () => {
    requireBuild();
    dir = tempDir("stead-key-dir-");
    keys = join(dir, "keys");
    mkdirSync(keys, { mode: 0o700 });
    const given = join(dir, "given.key");
    const key = `stead-key-v1 ${randomBytes(32).toString("base64")}\n`;
    writeFileSync(given, key, { mode: 0o600 });
    store = join(dir, "s", "stead.db");
    const made = await cli(["run", ECHO, "--input", "1", "--store", store], dir, { env: { STEAD_ENCRYPTION_KEY_FILE: given, STEAD_KEY_DIR: join(dir, "none") } });
    expect(made.code, made.stderr).toBe(0);
    const status = await cli(["keys", "status", "--json", "--store", store], dir, { env: { STEAD_ENCRYPTION_KEY_FILE: given, STEAD_KEY_DIR: join(dir, "none") } });
    const kekId = (JSON.parse(status.stdout) as { keys: { kekId: string }[] }).keys[0]?.kekId ?? "";
    // The store's key where Stead finds it by itself: the key directory.
    keyFile = join(keys, `${kekId}.key`);
    writeFileSync(keyFile, key, { mode: 0o600 });
  }, 60_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const ps = (env: Record<string, string> = {}) => cli(["ps", "--json", "--store", store], dir, { env: { STEAD_KEY_DIR: keys, ...env } });

  it("0700: used", async () => {
    chmodSync(keys, 0o700);
    const r = await ps();
    expect(r.code, r.stderr).toBe(0);
  });

  it.each([
    ["0777", "every user of this machine"],
    ["0770", "its group"],
  ])("%s: refused, STEAD_KEY_EXPOSED naming the directory, who may write it, and chmod 700", async (mode, who) => {
    chmodSync(keys, parseInt(mode, 8));
    try {
      const r = await ps();
      expect(r.code, r.stderr).toBe(2);
      const error = (JSON.parse(r.stderr) as { error: { code: string; message: string; fix: string } }).error;
      expect(error.code).toBe("STEAD_KEY_EXPOSED");
      expect(error.message).toContain(`the key directory ${keys} has mode ${mode}: ${who} may write it`);
      expect(error.fix).toContain(`chmod 700 ${keys}`);
      expect(error.fix).toContain("STEAD_ALLOW_READABLE_KEY_FILE=1");
    } finally {
      chmodSync(keys, 0o700);
    }
  });

  it("1777 (sticky, as /tmp): used; and a 0777 one with STEAD_ALLOW_READABLE_KEY_FILE=1", async () => {
    chmodSync(keys, 0o1777);
    try {
      expect((await ps()).code).toBe(0);
      chmodSync(keys, 0o777);
      const allowed = await ps({ STEAD_ALLOW_READABLE_KEY_FILE: "1" });
      expect(allowed.code, allowed.stderr).toBe(0);
    } finally {
      chmodSync(keys, 0o700);
    }
  });

  it("stead keys init refuses to write a new key into such a directory, and writes nothing", async () => {
    const open = join(dir, "open-keys");
    mkdirSync(open);
    chmodSync(open, 0o777);
    const r = await cli(["keys", "init", "--json", "--store", join(dir, "new", "stead.db")], dir, { env: { STEAD_KEY_DIR: open } });
    expect(r.code, r.stderr).toBe(2);
    expect((JSON.parse(r.stderr) as { error: { code: string } }).error.code).toBe("STEAD_KEY_EXPOSED");
    expect(readdirSync(open)).toEqual([]);
    expect(existsSync(join(dir, "new"))).toBe(false);
  });
});
