/**
 * Issue 39, also found: an import or a restore that is refused changes nothing, and creates no
 * store. An encrypted dump or backup without its key (`STEAD_KEY_MISSING`) is refused before the
 * target is opened; a plain dump into a store given a key (`STEAD_STORE_PLAIN`), refused once the
 * target is open, leaves no store file behind either. A Postgres target is left without a table
 * where the refusal comes before it is opened.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStead, localKey, workflow } from "../../src/index.js";
import { cli, requireBuild, tempDir } from "../cli-helpers.js";
import { completeRuns } from "../helpers/completed-runs.js";
import { withClient } from "../setup/databases.js";
import { freshDatabase } from "../setup/postgres.js";

const flow = workflow("refused-import", { version: "1" }, async (ctx, n: number) => ctx.step("a", () => n + 1));

async function seed(store: string, key?: Buffer): Promise<void> {
  const stead = createStead({ store, ...(key ? { encryption: { key: localKey(key, "the test's key"), keyDir: "/nonexistent-stead-keys" } } : {}) });
  await completeRuns(stead, flow, [["r1", 1]]);
}

const pgTables = (url: string) => withClient(url, async (c) => (await c.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")).rows);

describe("a refused import or restore creates nothing", () => {
  let dir = "";
  const key = randomBytes(32);
  const withKey = () => ({ STEAD_ENCRYPTION_KEY: key.toString("base64"), STEAD_KEY_DIR: join(dir, "no-keys") });
  const noKey = () => ({ STEAD_KEY_DIR: join(dir, "no-keys") });
  let plainDump = "";
  let encDump = "";
  let encBackup = "";

  beforeAll(async () => {
    requireBuild();
    dir = tempDir("stead-refused-import-");
    await seed(join(dir, "plain.db"));
    await seed(join(dir, "enc.db"), key);
    plainDump = join(dir, "plain.dump");
    encDump = join(dir, "enc.dump");
    encBackup = join(dir, "enc-backup.db");
    for (const [args, env] of [
      [["export", "--out", plainDump, "--store", join(dir, "plain.db")], noKey()],
      [["export", "--out", encDump, "--store", join(dir, "enc.db")], withKey()],
      [["backup", "--to", encBackup, "--store", join(dir, "enc.db")], withKey()],
    ] as const) {
      const r = await cli(args, dir, { env });
      expect(r.code, r.stderr).toBe(0);
    }
    mkdirSync(join(dir, "targets"));
  }, 60_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function refusal(args: string[], env: Record<string, string>): Promise<{ code: string; message: string }> {
    const r = await cli([...args, "--json"], dir, { env });
    expect(r.code, r.stderr).toBe(2);
    return (JSON.parse(r.stderr) as { error: { code: string; message: string } }).error;
  }

  it.each([
    ["stead import of an encrypted dump", () => ["import", encDump]],
    ["stead backup --restore of an encrypted backup", () => ["backup", "--restore", encBackup]],
  ])("%s without its key: STEAD_KEY_MISSING, and no store file or directory is left", async (_what, args) => {
    const target = join(dir, "targets", "new", "stead.db");
    const err = await refusal([...args(), "--store", target], noKey());
    expect(err.code).toBe("STEAD_KEY_MISSING");
    expect(readdirSync(join(dir, "targets"))).toEqual([]);
    const db = await freshDatabase("refused-key-missing");
    try {
      expect((await refusal([...args(), "--store", db.url], noKey())).code).toBe("STEAD_KEY_MISSING");
      expect(await pgTables(db.url)).toEqual([]);
    } finally {
      await db.drop();
    }
  }, 60_000);

  it("a plain dump into a new store given a key: STEAD_STORE_PLAIN, and no store file or directory is left", async () => {
    const target = join(dir, "targets", "keyed", "stead.db");
    const err = await refusal(["import", plainDump, "--store", target], withKey());
    expect(err.code).toBe("STEAD_STORE_PLAIN");
    expect(readdirSync(join(dir, "targets"))).toEqual([]);
  }, 60_000);

  it("an existing store a refused import was pointed at is left as it was", async () => {
    const there = join(dir, "targets", "there.db");
    await seed(there);
    const before = readdirSync(join(dir, "targets")).sort();
    const err = await refusal(["import", plainDump, "--store", there], noKey());
    expect(err.message).toMatch(/already holds runs/);
    expect(existsSync(there)).toBe(true);
    expect(readdirSync(join(dir, "targets")).sort()).toEqual(before);
  }, 60_000);
});
