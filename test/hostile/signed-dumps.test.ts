/**
 * Issue 39, item 10: the dump and the backup of an encrypted store are signed with a key derived
 * from the store's data key. An attacker who edits one and recomputes its unkeyed digests (row
 * counts and SHA-256 sums, all it carried) gets a refusal: `STEAD_BAD_DUMP` / `STEAD_BAD_BACKUP`
 * naming the signature, exit 2, and no target created. An unedited one still restores, into
 * either store. (A plain store's digests detect damage, not edits: import-tokens.test.ts.)
 */
import { randomBytes } from "node:crypto";
import { copyFileSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStead, localKey, workflow } from "../../src/index.js";
import { cli, requireBuild, tempDir } from "../cli-helpers.js";
import { completeRuns, numberedRuns } from "../helpers/completed-runs.js";
import { withClient } from "../setup/databases.js";
import { freshDatabase } from "../setup/postgres.js";
import { plantTokenInBackup, plantTokenInDump } from "./tampering.js";

const flow = workflow("signed", { version: "1" }, async (ctx, n: number) => ctx.step("a", () => `sealed output ${n}`));

interface Refusal {
  code: string;
  message: string;
  fix: string;
}

const pgTables = (url: string) => withClient(url, async (c) => (await c.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")).rows);

describe("the dump and the backup of an encrypted store", () => {
  let dir = "";
  let dump = "";
  let backup = "";
  const key = randomBytes(32).toString("base64");
  let env: Record<string, string>;

  beforeAll(async () => {
    requireBuild();
    dir = tempDir("stead-signed-");
    env = { STEAD_ENCRYPTION_KEY: key, STEAD_KEY_DIR: join(dir, "no-keys") };
    const store = join(dir, "source.db");
    const stead = createStead({ store, encryption: { key: localKey(Buffer.from(key, "base64"), "the test's key"), keyDir: join(dir, "no-keys") } });
    await completeRuns(stead, flow, numberedRuns("s", 3), (s) => s.tokens.create({ name: "ops", role: "operator" }));
    dump = join(dir, "source.dump");
    backup = join(dir, "source-backup.db");
    for (const args of [["export", "--out", dump], ["backup", "--to", backup]]) {
      const r = await cli([...args, "--store", store], dir, { env });
      expect(r.code, r.stderr).toBe(0);
    }
  }, 60_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function refused(args: string[], code: string): Promise<Refusal> {
    const r = await cli([...args, "--json"], dir, { env });
    expect(r.code, r.stderr).toBe(2);
    const err = (JSON.parse(r.stderr) as { error: Refusal }).error;
    expect(err.code, err.message).toBe(code);
    expect(err.fix.length).toBeGreaterThan(10);
    return err;
  }

  it("a dump edited with its digests recomputed is refused as edited, into either store; nothing is created", async () => {
    const edited = join(dir, "edited.dump");
    writeFileSync(edited, plantTokenInDump(readFileSync(dump, "utf8")).text);
    const target = join(dir, "never", "stead.db");
    const err = await refused(["import", edited, "--with-tokens", "--store", target], "STEAD_BAD_DUMP");
    expect(err.message).toMatch(/signature/);
    expect(existsSync(join(dir, "never"))).toBe(false);
    const db = await freshDatabase("signed-dump");
    try {
      await refused(["import", edited, "--with-tokens", "--store", db.url], "STEAD_BAD_DUMP");
      expect(await pgTables(db.url)).toEqual([]);
    } finally {
      await db.drop();
    }
  }, 60_000);

  it("a dump whose signature was taken off is refused", async () => {
    const lines = readFileSync(dump, "utf8").split("\n").filter((l) => l !== "");
    const trailer = JSON.parse(lines[lines.length - 1] as string) as Record<string, unknown>;
    expect(typeof trailer.signature).toBe("string");
    delete trailer.signature;
    const stripped = join(dir, "stripped.dump");
    writeFileSync(stripped, [...lines.slice(0, -1), JSON.stringify(trailer)].join("\n") + "\n");
    const err = await refused(["import", stripped, "--store", join(dir, "never", "s.db")], "STEAD_BAD_DUMP");
    expect(err.message).toMatch(/signature/);
    expect(existsSync(join(dir, "never"))).toBe(false);
  });

  it("a backup edited with its digests recomputed is refused as edited, into either store; nothing is created", async () => {
    const edited = join(dir, "edited-backup.db");
    copyFileSync(backup, edited);
    await plantTokenInBackup(edited);
    const err = await refused(["backup", "--restore", edited, "--with-tokens", "--store", join(dir, "never", "stead.db")], "STEAD_BAD_BACKUP");
    expect(err.message).toMatch(/signature/);
    expect(existsSync(join(dir, "never"))).toBe(false);
    const db = await freshDatabase("signed-backup");
    try {
      await refused(["backup", "--restore", edited, "--store", db.url], "STEAD_BAD_BACKUP");
      expect(await pgTables(db.url)).toEqual([]);
    } finally {
      await db.drop();
    }
  }, 60_000);

  it("unedited, both restore into either store, tokens included when asked", async () => {
    const db = await freshDatabase("signed-ok");
    const db2 = await freshDatabase("signed-ok-backup");
    try {
      for (const [args, where] of [
        [["import", dump, "--with-tokens"], join(dir, "imported.db")],
        [["backup", "--restore", backup, "--with-tokens"], join(dir, "restored.db")],
        [["import", dump, "--with-tokens"], db.url],
        [["backup", "--restore", backup, "--with-tokens"], db2.url],
      ] as const) {
        const r = await cli([...args, "--store", where], dir, { env });
        expect(r.code, `${args.join(" ")} into ${where}: ${r.stderr}`).toBe(0);
        expect(r.stdout).toMatch(/signature/);
        const ps = await cli(["status", "s2", "--json", "--store", where], dir, { env });
        expect((JSON.parse(ps.stdout) as { run: { output: unknown } }).run.output).toBe("sealed output 2");
      }
    } finally {
      await db.drop();
      await db2.drop();
    }
  }, 90_000);
});
