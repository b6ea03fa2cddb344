/**
 * Issue 39, item 10: importing access tokens is an explicit choice. A plain store's dump and
 * backup carry unkeyed digests, which detect damage, not edits: a crafted dump with a planted
 * admin token passes them. So `stead import` and `stead backup --restore` (and the library's
 * importDump and restoreBackup) bring no token unless `--with-tokens` / `withTokens: true`, and
 * say how many they left; everything else is imported and verified. On both stores.
 */
import { copyFileSync, createReadStream, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStead, workflow } from "../../src/index.js";
import { cli, requireBuild, tempDir } from "../cli-helpers.js";
import { completeRuns } from "../helpers/completed-runs.js";
import { STORE_KINDS } from "../helpers/both-stores.js";
import { withClient } from "../setup/databases.js";
import { freshDatabase } from "../setup/postgres.js";
import Database from "better-sqlite3";
import { plantTokenInBackup, plantTokenInDump } from "./tampering.js";

const flow = workflow("tokens-opt-in", { version: "1" }, async (ctx, n: number) => ctx.step("a", () => n * 2));

/** The names of the token rows the store at `location` holds. */
async function tokenNames(location: string): Promise<string[]> {
  if (location.startsWith("postgres")) return withClient(location, async (c) => (await c.query<{ name: string }>("SELECT name FROM tokens ORDER BY name")).rows.map((r) => r.name));
  const db = new Database(location, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare("SELECT name FROM tokens ORDER BY name").all() as { name: string }[]).map((r) => r.name);
  } finally {
    db.close();
  }
}

describe("tokens on import and restore", () => {
  let dir = "";
  let crafted = "";
  let plantedBackup = "";
  let secret = "";

  beforeAll(async () => {
    requireBuild();
    dir = tempDir("stead-import-tokens-");
    const store = join(dir, "source.db");
    await completeRuns(createStead({ store }), flow, [["t1", 21]], (s) => s.tokens.create({ name: "ops", role: "operator" }));
    const dump = join(dir, "source.dump");
    expect((await cli(["export", "--out", dump, "--store", store], dir)).code).toBe(0);
    const planted = plantTokenInDump(readFileSync(dump, "utf8"));
    secret = planted.secret;
    crafted = join(dir, "crafted.dump");
    writeFileSync(crafted, planted.text);
    const backup = join(dir, "backup.db");
    expect((await cli(["backup", "--to", backup, "--store", store], dir)).code).toBe(0);
    plantedBackup = join(dir, "planted-backup.db");
    copyFileSync(backup, plantedBackup);
    await plantTokenInBackup(plantedBackup);
  }, 60_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A new target of `kind`, and its cleanup. */
  async function target(kind: string, name: string): Promise<{ location: string; drop: () => Promise<void> }> {
    if (kind === "sqlite") return { location: join(dir, `${name}.db`), drop: () => Promise.resolve() };
    const db = await freshDatabase(name);
    return { location: db.url, drop: () => db.drop() };
  }

  it.each(STORE_KINDS)("a crafted dump into %s: the runs come, the planted admin token does not; --with-tokens brings both tokens", async (kind) => {
    const t = await target(kind, `crafted-${kind}`);
    const t2 = await target(kind, `crafted-with-${kind}`);
    try {
      const r = await cli(["import", crafted, "--store", t.location], dir);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/2 tokens not imported.*--with-tokens/);
      expect(await tokenNames(t.location)).toEqual([]);
      const s = await cli(["status", "t1", "--json", "--store", t.location], dir);
      expect((JSON.parse(s.stdout) as { run: { output: unknown } }).run.output).toBe(42);
      // The planted secret opens nothing there.
      const stead = createStead({ store: t.location, create: false });
      try {
        expect(await stead.tokens.verify(secret)).toMatchObject({ ok: false, reason: "unknown" });
      } finally {
        await stead.close();
      }

      const w = await cli(["import", crafted, "--with-tokens", "--store", t2.location], dir);
      expect(w.code, w.stderr).toBe(0);
      expect(await tokenNames(t2.location)).toEqual(["ops", "planted"]);
    } finally {
      await t.drop();
      await t2.drop();
    }
  }, 60_000);

  it.each(STORE_KINDS)("a backup restored into %s: no token unless --with-tokens", async (kind) => {
    const t = await target(kind, `restored-${kind}`);
    const t2 = await target(kind, `restored-with-${kind}`);
    try {
      const r = await cli(["backup", "--restore", plantedBackup, "--store", t.location], dir);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/2 tokens not imported.*--with-tokens/);
      expect(await tokenNames(t.location)).toEqual([]);
      const w = await cli(["backup", "--restore", plantedBackup, "--with-tokens", "--store", t2.location], dir);
      expect(w.code, w.stderr).toBe(0);
      expect(await tokenNames(t2.location)).toEqual(["ops", "planted"]);
    } finally {
      await t.drop();
      await t2.drop();
    }
  }, 60_000);

  it("the library: importDump brings no token unless withTokens, and says how many it left", async () => {
    for (const [name, options, expected] of [
      ["lib.db", {}, []],
      ["lib-with.db", { withTokens: true }, ["ops", "planted"]],
    ] as const) {
      const into = createStead({ store: join(dir, name) });
      try {
        const r = await into.admin.importDump(() => createReadStream(crafted), options);
        expect(r.tokensSkipped).toBe(expected.length === 0 ? 2 : 0);
        expect(await tokenNames(join(dir, name))).toEqual(expected);
      } finally {
        await into.close();
      }
    }
  });
});
