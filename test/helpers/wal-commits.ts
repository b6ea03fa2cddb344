import { readFileSync } from "node:fs";
import Database from "better-sqlite3";

const WAL_HEADER = 32;
const FRAME_HEADER = 24;

/**
 * Commits in an SQLite store's WAL since its last reset, read from the file: a frame whose header
 * gives the database's size in pages ends a transaction. What the disk saw, not what Stead counts.
 */
export function walCommits(path: string): number {
  const wal = readFileSync(`${path}-wal`);
  if (wal.byteLength < WAL_HEADER) return 0;
  const pageSize = wal.readUInt32BE(8);
  const salt = [wal.readUInt32BE(16), wal.readUInt32BE(20)];
  let commits = 0;
  for (let at = WAL_HEADER; at + FRAME_HEADER + pageSize <= wal.byteLength; at += FRAME_HEADER + pageSize) {
    // Frames left from before the last reset carry the old salt: they are not part of the log.
    if (wal.readUInt32BE(at + 8) !== salt[0] || wal.readUInt32BE(at + 12) !== salt[1]) break;
    if (wal.readUInt32BE(at + 4) !== 0) commits++;
  }
  return commits;
}

/** Empties the WAL into the database file, so that only what follows is counted. */
export function resetWal(path: string): void {
  const db = new Database(path);
  try {
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
}
