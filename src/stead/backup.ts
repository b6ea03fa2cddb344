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
import { accessSync, chmodSync, closeSync, constants, copyFileSync, existsSync, fsyncSync, linkSync, openSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { PassThrough } from "node:stream";
import { SteadError } from "../errors.js";
import { SqliteStore, sealBackup } from "../store/sqlite/index.js";
import { backupSignature, digestDifferences, digestStore, exportStore, importStore, privateTempDir, signatureMatches, VerifiedDump, type ImportOptions, type ImportSummary, type PrivateTempDir, type StoreDigest } from "../store/transfer/index.js";
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
      if (problems.length > 0) throw badBackup(file, `failed its check right after it was written (${problems.slice(0, 3).join("; ")})`, "take the backup again; if it fails again, check the disk the store is on");
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
 * A backup file found sound: SQLite's integrity check passes on it, its tables and columns are the
 * schema's, its record is well formed, and its rows match the digests recorded when it was taken
 * (an encrypted store's, and the signature its key made). Checked before the target store is
 * opened, so a bad backup creates or changes nothing.
 *
 * Invariant: what is restored is what was checked. The backup is copied once, at open, into a
 * private temp directory (private-temp.ts: 0700, the copy 0600), and both the check and the load
 * read that copy, never the file again: a file changed after its check (by whoever may write it,
 * while the target store is being opened) changes nothing. A copy, rather than one connection
 * held open from the check to the load, because SQLite reads pages from the file as it needs
 * them: bytes written into the file under an open connection are read by it. The load also
 * compares the rows it reads with the digests the check accepted.
 *
 * The copy is of the backup file alone. A backup is sealed as one self-contained file before it
 * gets its name (no -wal, no -journal), so a `-journal` or `-wal` beside it is not part of it; one
 * left by something that wrote the backup since can only have changed it, and then the copy fails
 * its integrity check or digests (STEAD_BAD_BACKUP) whatever that file holds.
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
    private readonly temp: PrivateTempDir,
  ) {}

  static async open(file: string, options: OpenBackupOptions): Promise<CheckedBackup> {
    const { signer } = options;
    const path = resolve(file);
    if (!existsSync(path) || !statSync(path).isFile()) {
      throw new SteadError("STEAD_BAD_PATH", `no backup file at ${path}`, { fix: "pass the file `stead backup --to <file>` wrote" });
    }
    const temp = privateTempDir("stead-restore-");
    try {
      const copyPath = privateCopy(path, temp.path);
      if (statSync(copyPath).size === 0) throw badBackup(path, "is empty (0 bytes): a copy of it that failed or was cut short", "restore from another backup (`stead backup --to` writes one)");
      let copy: SqliteStore;
      try {
        copy = new SqliteStore({ path: copyPath, readonly: true });
      } catch (e) {
        throw asDamage(path, copyPath, e);
      }
      try {
        const { record, signed } = await checkBackup(copy, path, signer);
        return new CheckedBackup(path, record, signed, copy, signer, temp);
      } catch (e) {
        await copy.close();
        throw asDamage(path, copyPath, e);
      }
    } catch (e) {
      await temp.remove();
      throw e;
    }
  }

  /** Loads the backup into `target`, which must hold no rows, and verifies every table there against it (tokens only `withTokens`). */
  async restoreInto(target: Store, options: Pick<ImportOptions, "withTokens"> = {}): Promise<RestoreSummary> {
    if (target.dialect === "sqlite" && resolve(target.location) === this.file) {
      throw badBackup(this.file, "is the store to restore into", "restore into another store (--store), or open the backup where it lies with --store <file>");
    }
    // The private copy is exported as a dump, read (and checked) as it is written, once to check it
    // and once to load it: the copy does not change, so nothing is spooled. A failed export ends
    // the dump early, and VerifiedDump refuses a dump without its trailer.
    const exported = (): PassThrough => {
      const spool = new PassThrough();
      exportStore(this.copy, spool, { allowLive: true, signer: this.signer }).then(
        () => spool.end(),
        (e: unknown) => {
          const err = asDamage(this.file, this.copy.location, e);
          spool.destroy(err instanceof Error ? err : new Error(String(err)));
        },
      );
      return spool;
    };
    // An encrypted backup's values are restored as they are, sealed; its keys come in the dump's
    // header and are taken as an import takes them (needing the backup's key at hand).
    const dump = await VerifiedDump.from(exported, this.file, { signer: this.signer });
    try {
      // The rows to load are the rows the check accepted: the same digests (recordedDigest(record) was checked at open).
      const changed = digestDifferences(this.record.tables as StoreDigest, dump.tables, "the backup as checked", "the rows read to restore it");
      if (changed.length > 0) throw badBackup(this.file, `changed after it was checked (${changed.join("; ")}): nothing was restored`, "restore from another backup, and keep it where no one else can write it");
      const summary = await importStore(target, dump, options);
      return { ...summary, signed: this.signed, backup: this.record };
    } finally {
      await dump.dispose();
    }
  }

  /** Closes the copy and removes it. */
  async close(): Promise<void> {
    try {
      await this.copy.close();
    } finally {
      await this.temp.remove();
    }
  }
}

/**
 * Copies the backup into `dir` (a private temp directory), 0600, and returns the copy's path. A
 * file system that clones files (btrfs, XFS, APFS) makes the copy without writing it again.
 */
function privateCopy(path: string, dir: string): string {
  const copyPath = join(dir, "backup.db");
  try {
    copyFileSync(path, copyPath, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
    // copyFile gives the copy the backup's mode; the directory is 0700 meanwhile.
    chmodSync(copyPath, 0o600);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOSPC" || code === "EDQUOT") {
      throw new SteadError("STEAD_BAD_PATH", `no room to copy the backup ${path} into ${dir} to check it (${code}): a restore checks and loads a private copy`, {
        fix: "free space in the temp directory, or point TMPDIR at a directory with room for the backup",
      });
    }
    throw new SteadError("STEAD_BAD_PATH", `cannot read the backup ${path} (${e instanceof Error ? e.message : String(e)})`, {
      fix: "check that this user may read the file, and that TMPDIR names a directory it may write",
    });
  }
  return copyPath;
}

/**
 * The backup's own record, once the copy passes SQLite's integrity check, has the schema's tables
 * and columns, and matches the digests it records, and, for an encrypted store's, the signature
 * only its key makes.
 */
async function checkBackup(copy: SqliteStore, path: string, signer: DumpSigner): Promise<{ record: BackupRecord; signed: boolean }> {
  const info = await copy.check();
  if (info.schemaVersion !== SCHEMA_VERSION) {
    throw badBackup(path, `was taken at schema version ${info.schemaVersion}; this Stead restores backups of version ${SCHEMA_VERSION}`, info.schemaVersion < SCHEMA_VERSION ? "restore it with the Stead version that took it, then migrate the restored store (`stead migrate`); or copy the backup and open the copy with --store, which migrates it" : "restore it with the newer Stead that took it");
  }
  const problems = await copy.integrityProblems();
  if (problems.length > 0) throw badBackup(path, `is damaged: ${problems.slice(0, 3).join("; ")}`, "restore from another backup");
  const record = await copy.backupRecord();
  if (!record) {
    throw badBackup(path, "is a Stead store but not a backup `stead backup` wrote (it records no digests to check it against)", "open it directly with --store, or copy it into another store with `stead export` and `stead import`");
  }
  const recorded = recordedDigest(record);
  const malformed = recordProblem(record);
  if (!recorded || malformed) throw badBackup(path, `has an unreadable record of itself (${malformed ?? "its digests"})`, "restore from another backup");
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

/** What is wrong with the record's own fields (printed by a restore, and signed for an encrypted store), or undefined. */
function recordProblem(record: BackupRecord): string | undefined {
  if (typeof record !== "object" || record === null || Array.isArray(record)) return "not an object";
  if (typeof record.source !== "string") return `its source is ${JSON.stringify(record.source) ?? "missing"}, not text`;
  if (!Number.isSafeInteger(record.takenAt) || record.takenAt < 0) return `its time is ${JSON.stringify(record.takenAt) ?? "missing"}, not a time in ms`;
  if (!Number.isSafeInteger(record.schemaVersion)) return `its schema version is ${JSON.stringify(record.schemaVersion) ?? "missing"}, not a number`;
  if (record.signature !== undefined && typeof record.signature !== "string") return "its signature is not text";
  return undefined;
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
 * A failure reading the backup's private copy (at `copyPath`) as damage to the backup `file`, when
 * that is what it is: a file that is not an SQLite database or not a Stead store, an empty one,
 * one of another schema, a table or column missing, a value of the wrong type, a page SQLite finds
 * malformed. A key this process lacks, and a failure of the machine (a full disk, no memory, an
 * I/O error), are passed on as they are; so is anything else (a bug: internal error).
 */
function asDamage(file: string, copyPath: string, e: unknown): unknown {
  const named = (text: string) => text.split(copyPath).join(file);
  if (e instanceof SteadError) {
    if (!BACKUP_DAMAGE.has(e.code)) return e;
    return badBackup(file, `is damaged, or is not a Stead backup at all: ${named(e.message)}`, "restore from another backup (`stead backup --to` writes one)");
  }
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !code.startsWith("SQLITE_") || SQLITE_MACHINE.test(code)) return e;
  return badBackup(file, `is damaged: SQLite reports ${JSON.stringify(named(e instanceof Error ? e.message : String(e)))} (${code})`, "restore from another backup");
}

/** Refusals of a file's content: a backup giving one is damaged. */
const BACKUP_DAMAGE: ReadonlySet<string> = new Set(["STEAD_NOT_A_STORE", "STEAD_STORE_MISSING", "STEAD_STORE_TOO_NEW", "STEAD_STORE_TOO_OLD", "STEAD_INVALID_STATE", "STEAD_DATA_TAMPERED"]);

/** SQLite's failures of the machine rather than of the file read (a private copy: no lock, no permission to lack). */
const SQLITE_MACHINE = /^SQLITE_(IOERR|NOMEM|FULL|CANTOPEN|PERM|BUSY|LOCKED|INTERRUPT|READONLY)/;

function badBackup(file: string, what: string, fix: string): SteadError {
  return new SteadError("STEAD_BAD_BACKUP", `the backup ${file} ${what}`, { fix });
}
