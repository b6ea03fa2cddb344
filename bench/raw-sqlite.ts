import { join } from "node:path";
import Database from "better-sqlite3";
import { stepResult } from "./report.js";

/**
 * The reference: what one durable commit per step costs with no runtime at all. An ordinary rowid
 * table in WAL mode with synchronous=FULL, one autocommit INSERT of a ~1 KB JSON row per step.
 */
export function rawSequential(dir: string, rows: number): { usPerCommit: number } {
  const db = new Database(join(dir, "raw.db"));
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = FULL");
    db.exec("CREATE TABLE results (id INTEGER PRIMARY KEY, run_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL)");
    const insert = db.prepare("INSERT INTO results (run_id, seq, body) VALUES (?, ?, ?)");
    const t0 = performance.now();
    for (let i = 0; i < rows; i++) insert.run("raw", i, JSON.stringify(stepResult(i)));
    const ms = performance.now() - t0;
    return { usPerCommit: (ms * 1000) / rows };
  } finally {
    db.close();
  }
}
