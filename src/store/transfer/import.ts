import { createReadStream, createWriteStream } from "node:fs";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { SteadError } from "../../errors.js";
import { TRANSFER_TABLES, type DumpSigner, type KeyedDigest, type StoreLifecycle, type TransferRow, type TransferRows, type TransferTable } from "../types.js";
import type { KeyAdoption } from "../ports/data-keys.js";
import { digestDifferences, digestsOf, digestStore, tableDigesters, type StoreDigest, type TableDigest } from "./digest.js";
import { dumpSignature, signatureMatches } from "./signing.js";
import { badDump, parseHeader, parseLine, type DumpHeader, type DumpTrailer } from "./dump-format.js";
import { TRANSFER_SCHEMA_VERSION } from "./tables.js";
import { dumpLines } from "./dump-lines.js";
import { privateTempDir, type PrivateTempDir } from "./private-temp.js";

/** A dump to read: a stream (read once: it is copied to a temp file), or a function opening it anew each time. */
export type DumpInput = Readable | (() => Readable);

export interface VerifyOptions {
  /**
   * Checks an encrypted dump's signature with the keys this process holds (an encrypting store's
   * `dumpSigner`; Stead's `dumpSigner()`). Without it an encrypted dump is refused.
   */
  signer?: DumpSigner;
}

/**
 * A dump read to its end and found whole: header, rows and trailer agree (counts and digests),
 * and an encrypted store's dump carries the signature of its store's key. Rows are written to a
 * store only from a verified dump, so a truncated, corrupted or (if signed) edited one changes nothing.
 */
export class VerifiedDump {
  private constructor(
    /** How messages name the dump (a file path, "standard input"). */
    readonly name: string,
    readonly header: DumpHeader,
    readonly tables: StoreDigest,
    /** Whether its signature was checked (an encrypted store's dump); a plain one's digests detect damage, not edits. */
    readonly signed: boolean,
    private readonly keyed: KeyedDigest | undefined,
    private readonly reopen: () => Readable,
    private readonly spool: PrivateTempDir | undefined,
  ) {}

  /**
   * Reads `input` to its end and checks it; rejects with STEAD_BAD_DUMP naming the first problem
   * (an encrypted dump whose key this process lacks: STEAD_KEY_MISSING), having touched no store.
   */
  static async from(input: DumpInput, name = "the dump", options: VerifyOptions = {}): Promise<VerifiedDump> {
    let reopen: () => Readable;
    let spool: PrivateTempDir | undefined;
    if (typeof input === "function") {
      reopen = input;
    } else {
      // A stream is read once: it is spooled (private-temp.ts says who removes the copy, and when).
      spool = privateTempDir("stead-import-");
      const file = join(spool.path, "dump.jsonl");
      try {
        await pipeline(input, createWriteStream(file, { mode: 0o600, flags: "wx" }));
      } catch (e) {
        await spool.remove();
        throw unreadable(name, e);
      }
      reopen = () => createReadStream(file);
    }
    try {
      const { header, tables, keyed } = await scanDump(reopen(), name, { signer: options.signer });
      return new VerifiedDump(name, header, tables, keyed !== undefined, keyed, reopen, spool);
    } catch (e) {
      await spool?.remove();
      throw unreadable(name, e);
    }
  }

  open(): Readable {
    return this.reopen();
  }

  /** Reads the dump again, checking it as `from` did (its signature with the key found then), handing each row to `onRow`. */
  reread(onRow: (table: TransferTable, row: TransferRow, bytes: number) => Promise<void>): Promise<{ tables: StoreDigest }> {
    return scanDump(this.open(), this.name, { keyed: this.keyed, onRow });
  }

  /** Removes the temp copy of a streamed dump. */
  async dispose(): Promise<void> {
    await this.spool?.remove();
  }
}

/** A read failure of the dump itself (missing file, a directory, no permission) as the user's error. */
function unreadable(name: string, e: unknown): unknown {
  if (e instanceof SteadError || typeof (e as NodeJS.ErrnoException | null)?.code !== "string") return e;
  return badDump(name, `cannot be read (${(e as Error).message})`, "pass a readable file written by `stead export`");
}

/** What an import writes to: a store, and, for an encrypted dump, the layer that adopts its keys. */
export type ImportTarget = StoreLifecycle & TransferRows & Partial<KeyAdoption>;

export interface ImportOptions {
  /** How messages name the dump when `input` is not a VerifiedDump. */
  name?: string;
  /**
   * Import the dump's access tokens too. Default false: a token is who may act on the store, and
   * a plain dump's digests do not tell an edited dump from its store's (see signing.ts), so they
   * come only when asked; the summary counts those left.
   */
  withTokens?: boolean;
  /** Checks an encrypted dump given as a stream (default: the target's own, `dumpSigner`). */
  signer?: DumpSigner;
  /** A `writeRows` call (one transaction) carries at most this many rows... */
  batchRows?: number;
  /** ...and about this many bytes of dump text. */
  batchBytes?: number;
}

export interface ImportSummary {
  /** The target store. */
  location: string;
  dialect: string;
  /** Dialect and schema version of the store the dump was taken from. */
  source: string;
  schema: number;
  /** Counts and digests, equal in the dump and in the target store read back. */
  tables: StoreDigest;
  /** Whether the dump's signature was checked (an encrypted store's dump). */
  signed: boolean;
  /** The dump's token rows not imported (no `withTokens`). */
  tokensSkipped: number;
}

/**
 * Imports a dump into `store`, which must hold no rows: verifies the whole dump first (nothing is
 * written from a truncated or corrupted one), creates the schema if needed, writes the rows as they
 * are in batches, then reads the store back and checks every table's count and digest against
 * the dump's trailer. An encrypted dump's rows are written sealed, as dumped, once the target
 * has adopted its keys.
 */
export async function importStore(store: ImportTarget, input: DumpInput | VerifiedDump, options: ImportOptions = {}): Promise<ImportSummary> {
  const signer = options.signer ?? store.dumpSigner;
  const dump = input instanceof VerifiedDump ? input : await VerifiedDump.from(input, options.name, signer ? { signer } : {});
  try {
    await store.migrate();
    const info = await store.check();
    if (dump.header.schema > info.schemaVersion) {
      throw new SteadError("STEAD_STORE_TOO_NEW", `${dump.name} holds a store of schema version ${dump.header.schema}; the target store at ${store.location} is at ${info.schemaVersion}`, {
        fix: "upgrade stead to the version that wrote the dump, run `stead migrate` on the target, then import again",
      });
    }
    await refuseNonEmpty(store);
    const keys = dump.header.keys ?? [];
    let undoKeys: (() => Promise<void>) | undefined;
    if (store.adoptKeys) undoKeys = await store.adoptKeys(keys, dump.name);
    else if (keys.length > 0) {
      throw new SteadError("STEAD_BAD_OPTION", `${dump.name} is of an encrypted store, and ${store.location} was opened without the encryption layer that takes its keys`, {
        fix: "import it through Stead (`stead import`, or importDump on createStead's instance)",
      });
    }
    const progress = { written: 0 };
    const skip: ReadonlySet<TransferTable> = new Set(options.withTokens ? [] : (["tokens"] as const));
    try {
      await writeDump(store, dump, skip, options.batchRows ?? 500, options.batchBytes ?? 4 * 1024 * 1024, progress);
    } catch (e) {
      // Refused before its first row: the target's own keys come back, so it is as it was.
      if (progress.written === 0 && undoKeys) await undoKeys();
      throw e;
    }
    const back = await digestStore(store);
    // A table left out is expected empty in the store (it was: the target held no rows).
    const expected = Object.fromEntries(TRANSFER_TABLES.map((t) => [t, skip.has(t) ? EMPTY_TABLE : dump.tables[t]])) as StoreDigest;
    const diffs = digestDifferences(expected, back, skip.size > 0 ? "the dump (less its tokens)" : "the dump", "the store");
    if (diffs.length > 0) {
      throw new SteadError("STEAD_INVALID_STATE", `the store at ${store.location} does not match ${dump.name} after the import: ${diffs.join("; ")}`, {
        fix: `something else wrote to the store during the import: ${REMOVE_PARTIAL}`,
      });
    }
    return { location: store.location, dialect: store.dialect, source: dump.header.source, schema: dump.header.schema, tables: back, signed: dump.signed, tokensSkipped: skip.has("tokens") ? dump.tables.tokens.rows : 0 };
  } finally {
    if (!(input instanceof VerifiedDump)) await dump.dispose();
  }
}

/** The digest of a table with no rows. */
const EMPTY_TABLE: TableDigest = { rows: 0, sha256: "0".repeat(64) };

const REMOVE_PARTIAL = "remove the target (delete the SQLite file, or drop and re-create the Postgres database), then import again";

async function refuseNonEmpty(store: ImportTarget): Promise<void> {
  for (const table of TRANSFER_TABLES) {
    const [row] = await store.readRows(table, null, 1);
    if (!row) continue;
    throw new SteadError(
      "STEAD_INVALID_STATE",
      table === "runs" ? `the store at ${store.location} already holds runs (run ${String(row.id)}, and maybe more)` : `the store at ${store.location} already holds ${table} rows`,
      { fix: "import into a new, empty store: a path where no file exists yet, or an empty Postgres database (createdb)" },
    );
  }
}

async function writeDump(store: ImportTarget, dump: VerifiedDump, skip: ReadonlySet<TransferTable>, batchRows: number, batchBytes: number, progress: { written: number }): Promise<void> {
  let batch: TransferRow[] = [];
  let table: TransferTable | undefined;
  let bytes = 0;
  let written = 0;
  const flush = async () => {
    if (table === undefined || batch.length === 0) return;
    await store.writeRows(table, batch);
    written += batch.length;
    progress.written = written;
    batch = [];
    bytes = 0;
  };
  try {
    const { tables } = await dump.reread(async (t, row, size) => {
      if (skip.has(t)) return;
      if (t !== table || batch.length >= batchRows || bytes + size > batchBytes) await flush();
      table = t;
      batch.push(row);
      bytes += size;
    });
    await flush();
    // The dump was verified before; a second read that differs means the file changed in between.
    const diffs = digestDifferences(dump.tables, tables, "the first read", "the second");
    if (diffs.length > 0) throw badDump(dump.name, `changed while it was imported: ${diffs.join("; ")}`);
  } catch (e) {
    if (written === 0) throw e;
    const msg = e instanceof Error ? e.message : String(e);
    throw new SteadError("STEAD_INVALID_STATE", `the import into ${store.location} stopped after ${written} rows: ${msg}`, {
      fix: `the store now holds part of the dump: ${REMOVE_PARTIAL}`,
      cause: e,
    });
  }
}

/**
 * Reads a dump from its header to its trailer, checking each line and, at the end, every table's
 * count and digest against the header and trailer, and an encrypted dump's signature: with
 * `keyed` when given (a second read), else with the key `signer` finds for the header's keys
 * (before any row is read). `onRow` sees each row, in dump order, as this Stead's schema has it;
 * the digests returned are of those rows (what a store holds after the import), which for a dump
 * of an older schema differ from its trailer's.
 */
async function scanDump(
  readable: Readable,
  name: string,
  options: { signer?: DumpSigner | undefined; keyed?: KeyedDigest | undefined; onRow?: (table: TransferTable, row: TransferRow, bytes: number) => Promise<void> },
): Promise<{ header: DumpHeader; tables: StoreDigest; keyed: KeyedDigest | undefined }> {
  const { onRow } = options;
  const digesters = tableDigesters();
  let upgraded: ReturnType<typeof tableDigesters> | undefined;
  let signed: ReturnType<typeof tableDigesters> | undefined;
  let keyed: KeyedDigest | undefined;
  let header: DumpHeader | undefined;
  let headerLine = "";
  let trailer: DumpTrailer | undefined;
  let lastTable = -1;
  let lineNo = 0;
  for await (const { text, complete } of dumpLines(readable as AsyncIterable<Buffer | string>, name)) {
    lineNo++;
    if (header === undefined) {
      header = parseHeader(text, name);
      headerLine = text;
      if (header.schema < TRANSFER_SCHEMA_VERSION) upgraded = tableDigesters();
      if (header.keys) {
        keyed = options.keyed ?? (await signerFor(options.signer, name)(header.keys, name));
        signed = tableDigesters(keyed);
      }
    }
    if (!complete && text.trim() !== "") {
      // A last line without its newline: export writes whole lines, so the dump was cut short.
      throw badDump(name, `ends in the middle of line ${lineNo}: it is truncated`);
    }
    if (lineNo === 1) continue;
    if (trailer !== undefined) {
      if (text.trim() === "") continue;
      throw badDump(`${name} line ${lineNo}`, "follows the trailer line, which must be the last");
    }
    const line = parseLine(text, name, lineNo, lastTable, header.schema);
    if (line.kind === "trailer") {
      trailer = line.trailer;
      continue;
    }
    lastTable = TRANSFER_TABLES.indexOf(line.table);
    const dumped = JSON.stringify(line.asDumped);
    digesters[line.table].add(dumped);
    signed?.[line.table].add(dumped);
    upgraded?.[line.table].add(JSON.stringify(line.row));
    if (onRow) await onRow(line.table, line.row, line.bytes);
  }
  if (header === undefined) throw badDump(name, "is empty, not a Stead export", "pass a file written by `stead export`");
  if (trailer === undefined) throw badDump(name, `ends at line ${lineNo} without its trailer line: it is truncated`);
  const tables = digestsOf(digesters);
  const problems = digestDifferences(trailer.tables, tables, "its trailer", "its rows");
  for (const t of TRANSFER_TABLES) {
    if (header.tables[t] !== tables[t].rows && trailer.tables[t].rows === tables[t].rows) problems.push(`${t}: ${header.tables[t]} rows in its header, ${tables[t].rows} in its rows`);
  }
  if (problems.length > 0) throw badDump(name, `is corrupted: ${problems.join("; ")}`);
  checkSignature(name, trailer, keyed && signed ? dumpSignature(keyed, headerLine, digestsOf(signed)) : undefined);
  return { header, tables: upgraded ? digestsOf(upgraded) : tables, keyed };
}

/** The signer an encrypted dump needs; refused without one (nothing could tell an edited dump from its store's). */
function signerFor(signer: DumpSigner | undefined, name: string): DumpSigner {
  if (signer) return signer;
  throw new SteadError("STEAD_BAD_OPTION", `${name} is of an encrypted store, and is checked with that store's key: nothing was given to check it with`, {
    fix: "import it through Stead (`stead import`, or importDump on createStead's instance), which checks it with the keys it finds",
  });
}

/** An encrypted dump carries the signature `expected` (computed from its rows); a plain one carries none. */
function checkSignature(name: string, trailer: DumpTrailer, expected: string | undefined): void {
  const EDITED = "export the source store again and import that file unedited; a dump of an encrypted store is signed by its key, and no one without the key can sign an edited one";
  if (expected === undefined) {
    if (trailer.signature !== undefined) throw badDump(name, "carries a signature but no keys in its header: it was edited (its keys taken out)", EDITED);
    return;
  }
  if (trailer.signature === undefined) throw badDump(name, "is of an encrypted store, and its trailer carries no signature: it was edited (the signature taken off)", EDITED);
  if (!signatureMatches(trailer.signature, expected)) throw badDump(name, "does not match its signature (made with its store's key): its rows or header were edited since it was exported", EDITED);
}
