/**
 * Review 2 (items 9, 10, 13): a restore checks and loads a private copy of its backup (0700
 * directory in TMPDIR, 0600 file), so what it loads is what it checked. That copy is a whole
 * store: it must go when the restore ends, however it ends (done, refused, SIGINT). And since the
 * copy is of the backup file alone, a `-journal` left beside a backup (garbage, or by something
 * that wrote the backup since) no longer makes SQLite refuse a read-only open of it ("attempt to
 * write a readonly database"): a backup is one sealed file, and whatever the file holds is checked.
 */
import { randomBytes } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStead, workflow } from "../../src/index.js";
import { cli, requireBuild, spawnCli, tempDir, until } from "../cli-helpers.js";
import { FAST_WORKER } from "../helpers/temp-store.js";

const RUNS = 40;
const flow = workflow("private-copy", { version: "1" }, async (ctx, n: number) => ctx.step("a", () => `${n}:${randomBytes(300_000).toString("base64")}`));

describe("a restore's private copy of its backup", () => {
  let dir = "";
  let backup = "";
  let tmp = "";
  const env = () => ({ TMPDIR: tmp });

  beforeAll(async () => {
    requireBuild();
    dir = tempDir("stead-restore-copy-");
    tmp = join(dir, "tmp");
    mkdirSync(tmp);
    const store = join(dir, "stead.db");
    const stead = createStead({ store });
    const w = stead.worker({ definitions: [flow], ...FAST_WORKER, concurrency: 8 });
    w.start();
    try {
      for (let n = 0; n < RUNS; n++) await stead.runs.start(flow, n, { id: `r${n}` });
      for (let n = 0; n < RUNS; n++) await stead.runs.waitFor(`r${n}`, { timeoutMs: 60_000 });
    } finally {
      await w.stop({ graceMs: 500 });
      await stead.close();
    }
    backup = join(dir, "backup.db");
    const r = await cli(["backup", "--to", backup, "--store", store], dir);
    expect(r.code, r.stderr).toBe(0);
  }, 180_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("is gone once the restore is done, and once it is refused", async () => {
    const done = await cli(["backup", "--restore", backup, "--store", join(dir, "ok", "s.db"), "--json"], dir, { env: env() });
    expect(done.code, done.stderr).toBe(0);
    expect((JSON.parse(done.stdout) as { tables: { runs: { rows: number } } }).tables.runs.rows).toBe(RUNS);
    expect(readdirSync(tmp)).toEqual([]);
    const damaged = join(dir, "damaged.db");
    const bytes = readFileSync(backup);
    bytes.fill(0x5a, 4096 * 3, 4096 * 3 + 64);
    writeFileSync(damaged, bytes);
    const refused = await cli(["backup", "--restore", damaged, "--store", join(dir, "never", "s.db"), "--json"], dir, { env: env() });
    expect({ code: refused.code, error: (JSON.parse(refused.stderr) as { error: { code: string } }).error.code }).toEqual({ code: 2, error: "STEAD_BAD_BACKUP" });
    expect(readdirSync(tmp)).toEqual([]);
    expect(existsSync(join(dir, "never"))).toBe(false);
  }, 120_000);

  it("is gone when the restore is interrupted (SIGINT) while it waits for its target", async () => {
    // A Postgres "server" that takes the connection and never answers: the restore has checked its
    // copy and waits, as it would for a slow database, until the signal.
    const sockets: Socket[] = [];
    const silent = createServer((s) => sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const port = (silent.address() as AddressInfo).port;
    try {
      const held = spawnCli(["backup", "--restore", backup, "--store", `postgres://u:p@127.0.0.1:${port}/never`], dir, { env: env(), timeoutMs: 120_000 });
      await until("the restore to wait for its target", () => (sockets.length > 0 || held.stderr() !== "" ? true : undefined), 60_000);
      expect(readdirSync(tmp).length, held.stderr()).toBe(1);
      held.child.kill("SIGINT");
      const r = await held.done;
      expect({ code: r.code, leftInTmp: readdirSync(tmp) }, r.stderr).toEqual({ code: 130, leftInTmp: [] });
      expect(r.stderr).toMatch(/SIGINT: stopped/);
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
    }
  }, 180_000);

  it("ignores a -journal file beside the backup (a backup is one sealed file): restored and checked as the file is", async () => {
    const copy = join(dir, "journalled.db");
    copyFileSync(backup, copy);
    const journal = randomBytes(4096);
    writeFileSync(`${copy}-journal`, journal);
    const r = await cli(["backup", "--restore", copy, "--store", join(dir, "from-journalled", "s.db"), "--json"], dir, { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { tables: { runs: { rows: number } } }).tables.runs.rows).toBe(RUNS);
    // Left as it was: the restore reads the backup, never writes beside it.
    expect(readFileSync(`${copy}-journal`).equals(journal)).toBe(true);
    expect(readdirSync(tmp)).toEqual([]);
  }, 120_000);
});
