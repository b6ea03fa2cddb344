/**
 * What overwriting deleted rows costs on the SQLite store (secure_delete, and emptying the -wal
 * after retention's deletes), on the built library: `stead gc --finished-before` of old runs on a
 * store that also holds runs it keeps, with it on (the default) and off, each on its own copy of
 * one seeded store; VACUUM of the same store, the other way to leave no deleted bytes behind
 * (it rewrites every row kept); and a run of sequential 1 KB steps with it on and off, the price
 * on ordinary writes.
 */
import { copyFileSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { stead as lib, stores } from "./lib.js";
import { stepResult } from "./report.js";

const DAY = 24 * 60 * 60 * 1000;

const flow = lib.workflow("bench-retention", { version: "1" }, async (ctx, input: { n: number; note: string }) => {
  const a = await ctx.step("a", () => stepResult(input.n));
  const b = await ctx.step("b", () => stepResult(input.n + 1));
  const c = await ctx.step("c", () => stepResult(input.n + 2));
  return { a: a.step, b: b.step, c: c.step, note: input.note };
});

/** A store at `path` with `old` runs finished 40 days ago and `kept` finished now; closed, its -wal checkpointed away. */
export async function seedRetentionStore(path: string, old: number, kept: number): Promise<{ bytes: number }> {
  const stead = lib.createStead({ store: path });
  const w = stead.worker({ definitions: [flow], concurrency: 50, pollMs: 20 });
  w.start();
  try {
    const ids: string[] = [];
    for (let i = 0; i < old + kept; i++) {
      const id = `${i < old ? "old" : "kept"}-${String(i).padStart(5, "0")}`;
      ids.push(id);
      await stead.runs.start(flow, { n: i, note: "lorem ipsum ".repeat(80) }, { id });
    }
    for (const id of ids) await stead.runs.waitFor(id, { timeoutMs: 300_000, pollMs: 100 });
  } finally {
    await w.stop({ graceMs: 1_000 });
    await stead.close();
  }
  const db = new Database(path);
  try {
    db.prepare("UPDATE runs SET updated_at = ? WHERE id LIKE 'old-%'").run(Date.now() - 40 * DAY);
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
  return { bytes: statSync(path).size };
}

/** ms for retention to delete the old runs of a copy of `seeded`, secure_delete on or off. */
export async function gcMs(seeded: string, copy: string, secureDelete: boolean): Promise<number> {
  copyFileSync(seeded, copy);
  const stead = lib.createStead({ store: new stores.SqliteStore({ path: copy, secureDelete }) });
  try {
    await stead.ready();
    const t0 = performance.now();
    const r = await stead.runs.deleteFinished({ finishedBefore: "30d" });
    const ms = performance.now() - t0;
    if (r.runs === 0) throw new Error("the bench's retention deleted no run");
    return ms;
  } finally {
    await stead.close();
  }
}

/** ms for VACUUM of a copy of `seeded` (after a gc with secure_delete off: the other way to leave no deleted bytes). */
export async function vacuumMs(seeded: string, copy: string): Promise<number> {
  await gcMs(seeded, copy, false);
  const db = new Database(copy);
  try {
    const t0 = performance.now();
    db.exec("VACUUM");
    return performance.now() - t0;
  } finally {
    db.close();
  }
}

const steps = lib.workflow("bench-erase-steps", { version: "1" }, async (ctx, n: number) => {
  for (let i = 0; i < n; i++) await ctx.step(`s${i}`, () => stepResult(i));
  return n;
});

/** ms per step of one run of `n` sequential 1 KB steps on a new store at `path`, secure_delete on or off. */
export async function stepsMsPerStep(path: string, n: number, secureDelete: boolean): Promise<number> {
  const stead = lib.createStead({ store: new stores.SqliteStore({ path, secureDelete }) });
  try {
    await stead.ready();
    const t0 = performance.now();
    const run = await stead.run(steps, n, { pollMs: 20 });
    if (run.status !== "completed") throw new Error(`the bench's run ended ${run.status}`);
    return (performance.now() - t0) / n;
  } finally {
    await stead.close();
  }
}

export const copyPath = (dir: string, name: string): string => join(dir, name);
