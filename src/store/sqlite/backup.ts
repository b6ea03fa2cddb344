/**
 * An SQLite store's online backup: one consistent file, taken while other connections write.
 *
 * `VACUUM INTO` reads the whole store inside one read transaction (in WAL mode writers go on
 * meanwhile) and writes a fresh, compact file as of that snapshot, in one step. Never a file copy
 * (committed pages still in the -wal file would be missed, and a copy taken mid-checkpoint is torn)
 * and never the incremental backup API (it restarts whenever another connection writes, so under
 * load it may never finish).
 *
 * Hazard: VACUUM INTO runs synchronously on the calling connection's thread for as long as the copy
 * takes; a process with leases to keep alive must not call it on its event loop (the worker's
 * scheduled backups run `stead backup` as a child process).
 */
import { closeSync, fsyncSync, openSync, statfsSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { SteadError } from "../../errors.js";
import type { BackupRecord } from "../ports/backups.js";
import { columnsAt, type TableSpec } from "../schema/model.js";
import { TABLES } from "../schema/tables.js";

/** The key of the `stead_meta` row a backup's record is kept in (not a transfer table: the digests do not cover it). */
const RECORD_KEY = "backup";

/** Copies the store into `file`, first checking that its file system has room for the pages in use. */
export function vacuumInto(db: Database.Database, file: string): void {
  const inUse = (Number(db.pragma("page_count", { simple: true })) - Number(db.pragma("freelist_count", { simple: true }))) * Number(db.pragma("page_size", { simple: true }));
  const fs = statfsSync(dirname(file));
  const free = Number(fs.bavail) * Number(fs.bsize);
  if (free < inUse) {
    throw new SteadError("STEAD_BAD_PATH", `no room for the backup at ${dirname(file)}: the store uses ${inUse} bytes and ${free} are free there`, {
      fix: "free space there, or write the backup to another file system",
    });
  }
  try {
    // Created empty first, readable by its owner alone (VACUUM INTO takes an empty file): SQLite
    // would create it under the umask, readable by every user of the machine.
    closeSync(openSync(file, "wx", 0o600));
    db.prepare("VACUUM INTO ?").run(file);
  } catch (e) {
    throw copyFailed(file, e);
  }
}

/** Writes the record into the copy, makes it one self-contained file (no -wal), and fsyncs it and its directory. */
export function sealBackup(file: string, record: BackupRecord): void {
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { fileMustExist: true });
    db.pragma("journal_mode = DELETE");
    db.pragma("synchronous = FULL");
    db.prepare("INSERT INTO stead_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(RECORD_KEY, JSON.stringify(record));
  } catch (e) {
    throw copyFailed(file, e);
  } finally {
    db?.close();
  }
  fsyncPath(file);
  fsyncPath(dirname(file));
}

export function readBackupRecord(db: Database.Database): BackupRecord | undefined {
  const row = db.prepare("SELECT value FROM stead_meta WHERE key = ?").get(RECORD_KEY) as { value: string } | undefined;
  if (!row) return undefined;
  try {
    return JSON.parse(row.value) as BackupRecord;
  } catch {
    return undefined;
  }
}

/**
 * `PRAGMA integrity_check`'s findings (pages, indexes, constraints), and the tables and columns the
 * schema has at the file's version that it lacks; empty when the file is sound.
 */
export function integrityProblems(db: Database.Database): string[] {
  const rows = db.pragma("integrity_check") as { integrity_check: string }[];
  const problems = rows.map((r) => r.integrity_check).filter((t) => t !== "ok").map((t) => `SQLite's integrity check found ${t}`);
  // A table or column missing would fail the foreign key check with "no such table" below.
  const schema = schemaProblems(db);
  if (schema.length > 0) return [...problems, ...schema];
  const fk = db.pragma("foreign_key_check") as { table: string; rowid: number; parent: string }[];
  for (const f of fk) problems.push(`row ${f.rowid} of ${f.table} refers to a missing ${f.parent} row`);
  return problems;
}

/** The schema description's tables and columns (at the file's schema version) the file lacks. */
function schemaProblems(db: Database.Database): string[] {
  const version = (db.prepare("SELECT MAX(version) AS v FROM stead_migrations").get() as { v: number | null }).v ?? 0;
  const out: string[] = [];
  for (const [name, spec] of Object.entries(TABLES) as [string, TableSpec][]) {
    if ((spec.only !== undefined && spec.only !== "sqlite") || (spec.since ?? 1) > version) continue;
    const has = new Set((db.pragma(`table_info(${JSON.stringify(name)})`) as { name: string }[]).map((c) => c.name));
    if (has.size === 0) {
      out.push(`its table ${name} is missing`);
      continue;
    }
    const missing = columnsAt(spec, version).filter((c) => (c.only === undefined || c.only === "sqlite") && !has.has(c.name));
    if (missing.length > 0) out.push(`its table ${name} lacks the column${missing.length === 1 ? "" : "s"} ${missing.map((c) => c.name).join(", ")}`);
  }
  return out;
}

function fsyncPath(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function copyFailed(file: string, e: unknown): SteadError {
  const code = (e as { code?: unknown }).code;
  const msg = e instanceof Error ? e.message : String(e);
  if (code === "SQLITE_FULL") {
    return new SteadError("STEAD_BAD_PATH", `the backup ${file} could not be written: its file system is full (${msg})`, {
      fix: "free space there, or write the backup to another file system",
    });
  }
  return new SteadError("STEAD_BAD_PATH", `the backup ${file} could not be written (${msg})`, { fix: "choose a path in a directory you can write to, on a file system with room for the store" });
}
