import { closeSync, fdatasyncSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { stepResult } from "./report.js";

/**
 * The reference: what one durable commit per step costs with no runtime at all. An ordinary rowid
 * table in WAL mode with synchronous=FULL, one autocommit INSERT of a ~1 KB JSON row per step.
 */
export function rawSequential(dir: string, rows: number): { usPerCommit: number } {
  return { usPerCommit: rawCommitsOf(dir, rows, (i) => JSON.stringify(stepResult(i))) };
}

/** µs per autocommit INSERT of `body(i)` into a fresh table of `dir`, as rawSequential commits. */
export function rawCommitsOf(dir: string, rows: number, body: (i: number) => string): number {
  const db = new Database(join(dir, "raw.db"));
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = FULL");
    db.exec("CREATE TABLE results (id INTEGER PRIMARY KEY, run_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL)");
    const insert = db.prepare("INSERT INTO results (run_id, seq, body) VALUES (?, ?, ?)");
    const t0 = performance.now();
    for (let i = 0; i < rows; i++) insert.run("raw", i, body(i));
    return ((performance.now() - t0) * 1000) / rows;
  } finally {
    db.close();
  }
}

/** µs per write-and-fdatasync of one 4 KB page in `dir`: the disk's durable-write cost, printed beside every SQLite ratio. */
export function fsyncUs(dir: string, n = 300): number {
  const fd = openSync(join(dir, "fsync.bin"), "w");
  try {
    const page = Buffer.alloc(4096, 1);
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      writeSync(fd, page, 0, page.byteLength, (i % 16) * 4096);
      fdatasyncSync(fd);
    }
    return ((performance.now() - t0) * 1000) / n;
  } finally {
    closeSync(fd);
  }
}
