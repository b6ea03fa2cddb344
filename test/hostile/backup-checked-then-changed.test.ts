/**
 * Review 2 (item 10): a backup is checked (integrity, digests, signature) when it is opened, and
 * read again, for the restore, later. The second read is exported and signed afresh with this
 * process's key, and the restore never compares it with what the first read checked. Whatever
 * the backup file holds at restore time is restored, reported as "signature checked".
 * Expected: the restore loads what the check accepted (the file as it was then), or refuses.
 */
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { connect, createServer, type AddressInfo, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStead, localKey, workflow } from "../../src/index.js";
import { openBackup } from "../../src/stead/transfer.js";
import { cli, requireBuild, spawnCli, tempDir, until } from "../cli-helpers.js";
import { completeRuns } from "../helpers/completed-runs.js";
import { freshDatabase } from "../setup/postgres.js";
import { plantTokenInBackup } from "./tampering.js";

const flow = workflow("toctou", { version: "1" }, async (ctx, n: number) => ctx.step("a", () => `sealed output ${n}`));

describe("a signed backup changed after it was checked", () => {
  let dir = "";
  const key = randomBytes(32).toString("base64");
  const encryption = () => ({ key: localKey(Buffer.from(key, "base64"), "the test's key"), keyDir: join(dir, "no-keys") });
  let backup = "";

  beforeAll(async () => {
    dir = tempDir("stead-toctou-");
    await completeRuns(createStead({ store: join(dir, "source.db"), encryption: encryption() }), flow, [["s1", 1]], async (s) => {
      await s.tokens.create({ name: "ops", role: "operator" });
      backup = (await s.admin.backup(join(dir, "backup.db"))).file;
    });
  }, 60_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("restores only what was checked (here: a token planted between the check and the load was restored as signed)", async () => {
    const checked = await openBackup(backup, encryption());
    expect(checked.signed).toBe(true);
    // The attacker edits the file after the check (the CLI opens the target store in between).
    const secret = await plantTokenInBackup(backup);
    const target = createStead({ store: join(dir, "restored.db"), encryption: encryption() });
    try {
      let outcome: string;
      try {
        const r = await target.admin.restoreBackup(checked, { withTokens: true });
        // What was loaded is what was checked: the checked record's tokens, row for row (digest).
        const same = r.tables.tokens.sha256 === (checked.record.tables.tokens as { sha256: string }).sha256;
        outcome = `restored, signed=${String(r.signed)}, tokens=${r.tables.tokens.rows}, as checked=${String(same)}`;
      } catch (e) {
        outcome = `refused: ${(e as { code?: string }).code ?? String(e)}`;
      }
      const planted = await target.tokens.verify(secret);
      // Expected: the backup as it was checked (its one token), or a refusal; the planted token unknown either way.
      expect({ outcome, plantedAccepted: planted.ok }).toEqual({
        outcome: expect.stringMatching(/^(restored, signed=true, tokens=1, as checked=true|refused: STEAD_BAD_BACKUP)$/) as unknown,
        plantedAccepted: false,
      });
    } finally {
      await checked.close();
      await target.close();
    }
  }, 60_000);
});

/**
 * A way to Postgres that holds each connection until `release()`: the CLI has checked the backup
 * and waits for its target meanwhile, as it would for a slow database, while the file is changed.
 */
async function heldProxy(target: URL): Promise<{ url: string; waiting: () => number; release: () => void; close: () => void }> {
  const held: Socket[] = [];
  const open: Socket[] = [];
  let released = false;
  const pipe = (client: Socket) => {
    const server = connect(Number(target.port), target.hostname);
    open.push(client, server);
    client.pipe(server).pipe(client);
    client.on("error", () => server.destroy());
    server.on("error", () => client.destroy());
  };
  const proxy = createServer((client) => (released ? pipe(client) : held.push(client)));
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
  const url = new URL(target.href);
  url.hostname = "127.0.0.1";
  url.port = String((proxy.address() as AddressInfo).port);
  return {
    url: url.href,
    waiting: () => held.length,
    release() {
      released = true;
      for (const c of held.splice(0)) pipe(c);
    },
    close() {
      for (const s of [...held, ...open]) s.destroy();
      proxy.close();
    },
  };
}

describe("stead backup --restore, with the backup changed while the CLI opens its target", () => {
  let dir = "";
  let backup = "";

  beforeAll(async () => {
    requireBuild();
    dir = tempDir("stead-toctou-cli-");
    await completeRuns(createStead({ store: join(dir, "source.db") }), flow, [["s1", 1]], (s) => s.tokens.create({ name: "ops", role: "operator" }));
    backup = join(dir, "backup.db");
    const r = await cli(["backup", "--to", backup, "--store", join(dir, "source.db")], dir);
    expect(r.code, r.stderr).toBe(0);
  }, 60_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("restores the backup as it was checked: a token planted meanwhile is not restored", async () => {
    const db = await freshDatabase("toctou-cli");
    const proxy = await heldProxy(new URL(db.url));
    try {
      const restore = spawnCli(["backup", "--restore", backup, "--store", proxy.url, "--with-tokens", "--json"], dir, { timeoutMs: 60_000 });
      await until("the restore to open its target", () => (proxy.waiting() > 0 || restore.stderr() !== "" ? true : undefined), 30_000);
      const secret = await plantTokenInBackup(backup);
      proxy.release();
      const r = await restore.done;
      expect(r.code, r.stderr).toBe(0);
      expect((JSON.parse(r.stdout) as { tables: { tokens: { rows: number } } }).tables.tokens.rows).toBe(1);
      const restored = createStead({ store: db.url });
      try {
        expect((await restored.tokens.verify(secret)).ok).toBe(false);
        expect((await restored.tokens.list()).map((t) => t.name)).toEqual(["ops"]);
      } finally {
        await restored.close();
      }
    } finally {
      proxy.close();
      await db.drop();
    }
  }, 90_000);
});
