/**
 * Review 2 (item 5): `stead gc` zeroes what it frees and truncates the -wal after, but the
 * truncating checkpoint gives up when another connection is reading (a `stead serve`, a backup
 * in progress, an export). The -wal then keeps the frames that wrote the deleted runs; SQLite's
 * own checkpoints later are PASSIVE and never truncate, and a restarted -wal only overwrites from
 * its start, so the old frames past the new ones stay in the file. Expected: none of a deleted
 * run's bytes in the files once the reader is gone and the store has been written again.
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStead, workflow } from "../../src/index.js";
import { cli, requireBuild, tempDir } from "../cli-helpers.js";
import { FAST_WORKER } from "../helpers/temp-store.js";

const DAY = 24 * 60 * 60 * 1000;
const marker = (run: string) => `GCMARK-${run}-`.repeat(400);

const flow = workflow("gc-reader", { version: "1" }, async (ctx, input: { run: string; note: string }) => {
  const b = await ctx.step("b", () => `${marker(input.run)}|b`);
  return { b: b.length };
});

function occurrences(path: string, needle: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const f of [path, `${path}-wal`]) {
    if (!existsSync(f)) continue;
    const text = readFileSync(f).toString("latin1");
    let n = 0;
    for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) n++;
    out[f.endsWith("-wal") ? "wal" : "db"] = n;
  }
  return out;
}

describe("stead gc while another connection reads the store", () => {
  let dir = "";
  let store = "";
  const old = Array.from({ length: 6 }, (_, i) => `old${i}`);

  beforeAll(async () => {
    requireBuild();
    dir = tempDir("stead-gc-reader-");
    store = join(dir, "stead.db");
    const stead = createStead({ store });
    const w = stead.worker({ definitions: [flow], ...FAST_WORKER });
    w.start();
    try {
      for (const id of old) await stead.start(flow, { run: id, note: marker(id) }, { id });
      for (const id of old) expect((await stead.waitFor(id, { timeoutMs: 20_000 })).status).toBe("completed");
    } finally {
      await w.stop({ graceMs: 500 });
      await stead.close();
    }
    const db = new Database(store);
    try {
      db.prepare(`UPDATE runs SET updated_at = ? WHERE id LIKE 'old%'`).run(Date.now() - 40 * DAY);
    } finally {
      db.close();
    }
  }, 60_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("leaves none of the deleted runs' bytes once the reader is gone and the store is written again", async () => {
    // A long-lived worker keeps the store open (so no last-close checkpoint cleans up after gc).
    const stead = createStead({ store });
    const w = stead.worker({ definitions: [flow], ...FAST_WORKER });
    w.start();
    try {
      // A reader in the middle of a read transaction (as a backup's VACUUM INTO or an export is).
      const reader = new Database(store, { readonly: true });
      // NO_READER=1 runs the same without the reader: it passes (the control).
      const holdReader = process.env.NO_READER === undefined;
      if (holdReader) reader.exec("BEGIN");
      reader.prepare("SELECT count(*) FROM runs").get();
      const r = await cli(["gc", "--finished-before", "30d", "--store", store, "--json"], dir);
      if (holdReader) reader.exec("COMMIT");
      reader.close();
      expect(r.code, r.stderr).toBe(0);
      expect((JSON.parse(r.stdout) as { runs: number }).runs).toBe(old.length);
      // Life goes on: a few more runs are written (SQLite's own checkpoints run).
      for (let i = 0; i < 5; i++) await stead.start(flow, { run: `new${i}`, note: "x" }, { id: `new${i}` });
      for (let i = 0; i < 5; i++) await stead.waitFor(`new${i}`, { timeoutMs: 20_000 });
      const left = Object.fromEntries(old.map((id) => [id, occurrences(store, `GCMARK-${id}-`)]));
      expect(left).toEqual(Object.fromEntries(old.map((id) => [id, { db: 0, wal: 0 }])));
    } finally {
      await w.stop({ graceMs: 500 });
      await stead.close();
    }
  }, 90_000);
});
