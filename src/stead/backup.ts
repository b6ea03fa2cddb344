/**
 * Backups of an SQLite store: `stead backup --to FILE` and `--restore FILE`.
 *
 * A backup is a copy taken online in one step (the store's `backupInto`), checked before it gets
 * its name: SQLite's integrity check passes on it, and its transfer tables' row counts and digests
 * are recorded inside it. It is itself a Stead store, so it can be opened where it lies (`--store
 * FILE`) on any machine; a restore checks it again and loads it into an empty store of either
 * dialect through the same path `stead import` takes.
 *
 * Invariants: a backup never overwrites a file (the finished copy is linked into place, which
 * fails if the name was taken meanwhile), and a copy that failed a check is removed, never named.
 */
import { accessSync, closeSync, constants, existsSync, fsyncSync, linkSync, openSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { PassThrough } from "node:stream";
import { SteadError } from "../errors.js";
import { SqliteStore, sealBackup } from "../store/sqlite/index.js";
import { backupSignature, digestDifferences, digestStore, exportStore, importStore, signatureMatches, VerifiedDump, type ImportOptions, type ImportSummary, type StoreDigest } from "../store/transfer/index.js";
import { TRANSFER_TABLES, type BackupRecord, type DumpSigner, type Store } from "../store/types.js";
import { SCHEMA_VERSION } from "../store/schema/tables.js";

export interface BackupSummary {
  /** The backup's absolute path. */
  file: string;
  /** The store it copies, and that store's schema version. */
  source: string;
  schemaVersion: number;
  bytes: number;
  /** Row counts and digests of the copy's tables, as recorded inside it. */
  tables: StoreDigest;
}

export interface RestoreSummary extends ImportSummary {
  /** What the backup recorded about itself. */
  backup: BackupRecord;
}

/**
 * Copies `store` into a new file at `target`, checks the copy, and records its digests in it; an
 * encrypted store's copy also records a signature (store/transfer/signing.ts) made with its key.
 */
export async function takeBackup(store: Store & { dumpSigner?: DumpSigner }, target: string): Promise<BackupSummary> {
  if (!store.backupInto) {
    throw new SteadError("STEAD_BAD_OPTION", `the store ${store.location} is a ${store.dialect} database: \`stead backup\` copies SQLite stores`, {
      fix: "back a Postgres database up with its own tools (pg_dump, or base backups with WAL archiving), or copy it into another store with `stead export` and `stead import`",
    });
  }
  const file = resolve(target);
  if (file === resolve(store.location)) throw badTarget(file, "is the store itself");
  checkTarget(file);
  const info = await store.check();
  const partial = join(dirname(file), `.${basename(file)}.${process.pid}.partial`);
  rmSync(partial, { force: true });
  try {
    const takenAt = Date.now();
    await store.backupInto(partial);
    const meta = { source: store.location, takenAt, schemaVersion: info.schemaVersion };
    const { tables, signature } = await withCopy(partial, async (copy) => {
      const problems = await copy.integrityProblems();
      if (problems.length > 0) throw badBackup(file, `failed SQLite's integrity check right after it was written (${problems.slice(0, 3).join("; ")})`, "take the backup again; if it fails again, check the disk the store is on");
      const keys = await copy.dataKeys();
      if (keys.length === 0) return { tables: await digestStore(copy), signature: undefined };
      if (!store.dumpSigner) {
        throw new SteadError("STEAD_BAD_OPTION", `the store ${store.location} is encrypted, and was opened without the encryption layer that signs its backup`, { fix: "take it through Stead (`stead backup`, or backup on createStead's instance)" });
      }
      const keyed = await store.dumpSigner(keys, store.location);
      return { tables: await digestStore(copy), signature: backupSignature(keyed, meta, await digestStore(copy, undefined, keyed)) };
    });
    sealBackup(partial, { ...meta, tables, ...(signature ? { signature } : {}) });
    try {
      linkSync(partial, file);
    } catch (e) {
      throw badTarget(file, `could not be created (${e instanceof Error ? e.message : String(e)})`);
    }
    // The name is durable before the backup is reported taken (and older ones pruned).
    fsyncDir(dirname(file));
    return { file, source: store.location, schemaVersion: info.schemaVersion, bytes: statSync(file).size, tables };
  } finally {
    rmSync(partial, { force: true });
  }
}

/**
 * A backup file opened read-only and found sound: SQLite's integrity check passes and its rows
 * match the digests recorded when it was taken. Checked before the target store is opened, so a
 * bad backup creates or changes nothing.
 */
export interface OpenBackupOptions {
  /** Checks an encrypted store's backup with the keys this process holds (stead/transfer.ts's `dumpSigner`). */
  signer: DumpSigner;
}

export class CheckedBackup {
  private constructor(
    readonly file: string,
    readonly record: BackupRecord,
    /** Whether its signature was checked (an encrypted store's backup); a plain one's digests detect damage, not edits. */
    readonly signed: boolean,
    private readonly copy: SqliteStore,
    private readonly signer: DumpSigner,
  ) {}

  static async open(file: string, options: OpenBackupOptions): Promise<CheckedBackup> {
    const { signer } = options;
    const path = resolve(file);
    if (!existsSync(path) || !statSync(path).isFile()) {
      throw new SteadError("STEAD_BAD_PATH", `no backup file at ${path}`, { fix: "pass the file `stead backup --to <file>` wrote" });
    }
    let copy: SqliteStore;
    try {
      copy = new SqliteStore({ path, readonly: true });
    } catch (e) {
      throw asDamage(path, e);
    }
    try {
      const { record, signed } = await checkBackup(copy, path, signer);
      return new CheckedBackup(path, record, signed, copy, signer);
    } catch (e) {
      await copy.close();
      throw asDamage(path, e);
    }
  }

  /** Loads the backup into `target`, which must hold no rows, and verifies every table there against it (tokens only `withTokens`). */
  async restoreInto(target: Store, options: Pick<ImportOptions, "withTokens"> = {}): Promise<RestoreSummary> {
    if (target.dialect === "sqlite" && resolve(target.location) === this.file) {
      throw badBackup(this.file, "is the store to restore into", "restore into another store (--store), or open the backup where it lies with --store <file>");
    }
    const spool = new PassThrough();
    // The dump is read (and checked) while it is written: a failed export ends it early, and
    // VerifiedDump refuses a dump without its trailer.
    const exported = exportStore(this.copy, spool, { allowLive: true, signer: this.signer }).then(
      () => spool.end(),
      (e: unknown) => {
        const err = asDamage(this.file, e);
        spool.destroy(err instanceof Error ? err : new Error(String(err)));
        throw err;
      },
    );
    // An encrypted backup's values are restored as they are, sealed; its keys come in the dump's
    // header and are taken as an import takes them (needing the backup's key at hand).
    const [, dump] = await Promise.all([exported, VerifiedDump.from(spool, this.file, { signer: this.signer })]);
    try {
      const summary = await importStore(target, dump, options);
      return { ...summary, signed: this.signed, backup: this.record };
    } finally {
      await dump.dispose();
    }
  }

  close(): Promise<void> {
    return this.copy.close();
  }
}

/**
 * The backup's own record, once the copy passes SQLite's integrity check and matches the digests
 * it records, and, for an encrypted store's, the signature only its key makes.
 */
async function checkBackup(copy: SqliteStore, path: string, signer: DumpSigner): Promise<{ record: BackupRecord; signed: boolean }> {
  const info = await copy.check();
  if (info.schemaVersion !== SCHEMA_VERSION) {
    throw badBackup(path, `was taken at schema version ${info.schemaVersion}; this Stead restores backups of version ${SCHEMA_VERSION}`, info.schemaVersion < SCHEMA_VERSION ? "restore it with the Stead version that took it, then migrate the restored store (`stead migrate`); or copy the backup and open the copy with --store, which migrates it" : "restore it with the newer Stead that took it");
  }
  const problems = await copy.integrityProblems();
  if (problems.length > 0) throw badBackup(path, `is damaged: SQLite's integrity check found ${problems.slice(0, 3).join("; ")}`, "restore from another backup");
  const record = await copy.backupRecord();
  if (!record) {
    throw badBackup(path, "is a Stead store but not a backup `stead backup` wrote (it records no digests to check it against)", "open it directly with --store, or copy it into another store with `stead export` and `stead import`");
  }
  const recorded = recordedDigest(record);
  if (!recorded) throw badBackup(path, "has an unreadable record of its digests", "restore from another backup");
  const changed = digestDifferences(recorded, await digestStore(copy), "the backup's record", "its rows");
  if (changed.length > 0) throw badBackup(path, `does not match the digests recorded when it was taken (${changed.join("; ")}): it was changed since`, "restore from another backup");
  const keys = await copy.dataKeys();
  const EDITED = "restore from another backup; a backup of an encrypted store is signed by its key, and no one without the key can sign an edited one";
  if (keys.length === 0) {
    if (record.signature !== undefined) throw badBackup(path, "carries a signature but no keys: it was edited (its keys taken out)", EDITED);
    return { record, signed: false };
  }
  if (typeof record.signature !== "string") throw badBackup(path, "is of an encrypted store, and records no signature: it was edited (the signature taken off)", EDITED);
  const keyed = await signer(keys, path);
  const expected = backupSignature(keyed, record, await digestStore(copy, undefined, keyed));
  if (!signatureMatches(record.signature, expected)) throw badBackup(path, "does not match its signature (made with its store's key when it was taken): its rows or record were edited since", EDITED);
  return { record, signed: true };
}

function recordedDigest(record: BackupRecord): StoreDigest | undefined {
  const tables = record.tables as Partial<StoreDigest> | undefined;
  if (typeof tables !== "object" || tables === null) return undefined;
  for (const t of TRANSFER_TABLES) {
    const d = tables[t];
    if (typeof d?.rows !== "number" || typeof d.sha256 !== "string") return undefined;
  }
  return tables as StoreDigest;
}

async function withCopy<T>(path: string, fn: (copy: SqliteStore) => Promise<T>): Promise<T> {
  const copy = new SqliteStore({ path, readonly: true });
  try {
    return await fn(copy);
  } finally {
    await copy.close();
  }
}

function fsyncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function checkTarget(file: string): void {
  if (existsSync(file)) throw badTarget(file, "already exists: a backup never overwrites a file");
  const dir = dirname(file);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw badTarget(file, `cannot be written: ${dir} is not a directory`);
  try {
    accessSync(dir, constants.W_OK);
  } catch {
    throw badTarget(file, `cannot be written: ${dir} is not writable by this user`);
  }
}

function badTarget(file: string, what: string): SteadError {
  return new SteadError("STEAD_BAD_PATH", `the backup target ${file} ${what}`, { fix: "choose a new file name in a directory you can write to" });
}

/**
 * A failure reading the backup as damage to it, when that is what it is: SQLite finding the file
 * malformed (a page header, the database header) or not a database, or the file not being a
 * Stead store. Anything else (a permission, a full disk) is passed on as it is.
 */
function asDamage(file: string, e: unknown): unknown {
  if (e instanceof SteadError) {
    if (e.code !== "STEAD_NOT_A_STORE") return e;
    const cause = e.cause instanceof Error ? e.cause.message : e.message;
    return badBackup(file, `is damaged, or is not a Stead store at all (${cause})`, "restore from another backup (`stead backup --to` writes one)");
  }
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !/^SQLITE_(CORRUPT|NOTADB)/.test(code)) return e;
  return badBackup(file, `is damaged: SQLite reports ${JSON.stringify(e instanceof Error ? e.message : String(e))} (${code})`, "restore from another backup");
}

function badBackup(file: string, what: string, fix: string): SteadError {
  return new SteadError("STEAD_BAD_BACKUP", `the backup ${file} ${what}`, { fix });
}
