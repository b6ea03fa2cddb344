/**
 * Issue 39, item 5: `stead gc` leaves nothing of a deleted run readable in the SQLite store's
 * files. A delete only unlinks rows: their bytes stayed in free pages of the store file and in
 * frames of its -wal (a `strings` of the file found a deleted run's id 24 times). Retention's
 * deletes now overwrite what they free (SQLite's secure_delete) and the -wal is checkpointed and
 * truncated after them, so a scan of the files finds none of a deleted run's inputs, outputs or
 * events, while the kept run's are all there. SQLite only: Postgres keeps deleted rows in its
 * data files until VACUUM reuses their space (docs/guides/operations.md, Retention).
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import { createStead, workflow } from "../../src/index.js";
import { cli, requireBuild, tempDir } from "../cli-helpers.js";
import { completeRuns } from "../helpers/completed-runs.js";

const DAY = 24 * 60 * 60 * 1000;
/** Big enough that an input or output spills onto overflow pages of its own (4 KiB pages). */
const marker = (run: string) => `GCMARK-${run}-`.repeat(400);

const flow = workflow("gc-trace", { version: "1" }, async (ctx, input: { run: string; note: string }) => {
  const a = await ctx.step("a", () => `${input.note}|a`);
  const b = await ctx.step("b", () => `${marker(input.run)}|b`);
  return { a: a.length, b: b.length, echo: input.note.slice(0, 200) };
});

/** How many times `needle` occurs in the store file and its -wal, read as bytes. */
function occurrences(path: string, needle: string): number {
  let n = 0;
  for (const f of [path, `${path}-wal`]) {
    if (!existsSync(f)) continue;
    const text = readFileSync(f).toString("latin1");
    for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) n++;
  }
  return n;
}

describe("stead gc --finished-before on an SQLite store", () => {
  let dir = "";
  let store = "";
  const old = Array.from({ length: 12 }, (_, i) => `old${i}`);

  beforeAll(async () => {
    requireBuild();
    dir = tempDir("stead-gc-trace-");
    store = join(dir, "stead.db");
    await completeRuns(createStead({ store }), flow, [...old, "kept"].map((id) => [id, { run: id, note: marker(id) }] as const));
    // Time passes for the old runs: they finished 40 days ago.
    const db = new Database(store);
    try {
      db.prepare(`UPDATE runs SET updated_at = ? WHERE id LIKE 'old%'`).run(Date.now() - 40 * DAY);
    } finally {
      db.close();
    }
    for (const id of [...old, "kept"]) expect(occurrences(store, `GCMARK-${id}-`), `${id} before gc`).toBeGreaterThan(0);
  }, 60_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("deletes the old runs and leaves none of their bytes in the store file or its -wal", async () => {
    const r = await cli(["gc", "--finished-before", "30d", "--store", store, "--json"], dir);
    expect(r.code, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { runs: number }).runs).toBe(old.length);
    const left = Object.fromEntries(old.map((id) => [id, occurrences(store, `GCMARK-${id}-`)]));
    expect(left).toEqual(Object.fromEntries(old.map((id) => [id, 0])));
    // The kept run is whole, and reads back.
    expect(occurrences(store, "GCMARK-kept-")).toBeGreaterThan(0);
    const s = await cli(["status", "kept", "--json", "--store", store], dir);
    expect((JSON.parse(s.stdout) as { run: { status: string } }).run.status).toBe("completed");
  }, 60_000);
});
