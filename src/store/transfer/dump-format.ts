/**
 * The dump format (`stead export`): JSON lines.
 *
 *   {"stead-export":1,"schema":1,"source":"sqlite","digest":"sha256-sum","tables":{"runs":3,...}}
 *   {"t":"runs","r":{"id":"...",...}}          one line per row, tables in TRANSFER_TABLES order
 *   {"stead-export-end":1,"tables":{"runs":{"rows":3,"sha256":"..."},...}}
 *
 * A dump of an encrypted store is version 2: its header also carries the store's data keys,
 * wrapped as the store keeps them (`"keys":[{"id":"d1","kekId":"…","wrapped":"…","createdAt":…}]`),
 * its rows hold their values sealed, and its trailer a `"signature"` (signing.ts) that only a
 * holder of the store's key can make. Its trailer is version 1, as every dump's.
 *
 * A dump without its trailer line is truncated; one whose rows do not add up to the trailer's
 * counts and digests is corrupted; an encrypted one whose signature is missing or does not check
 * was edited. None is ever imported. A plain dump's digests detect damage, not edits.
 */
import { SteadError } from "../../errors.js";
import { TRANSFER_TABLES, type DataKeyRow, type TransferRow, type TransferTable } from "../types.js";
import type { StoreDigest, TableDigest } from "./digest.js";
import { canonicalRow, TRANSFER_SCHEMA_VERSION } from "./tables.js";

/** The newest format version this code writes and reads. A reader refuses a larger one. */
export const DUMP_VERSION = 2;
/** A plain store's dump: what every Stead before encryption reads. */
export const PLAIN_DUMP_VERSION = 1;
/** Every dump's trailer. */
export const TRAILER_VERSION = 1;
export const DIGEST_NAME = "sha256-sum";

export interface DumpHeader {
  "stead-export": number;
  /** Schema version of the store the dump was taken from. */
  schema: number;
  /** Dialect of that store. */
  source: string;
  digest: string;
  /** Row count per table. */
  tables: Record<TransferTable, number>;
  /** An encrypted store's data keys, wrapped (version 2 only). */
  keys?: DataKeyRow[];
}

export interface DumpTrailer {
  "stead-export-end": number;
  tables: StoreDigest;
  /** An encrypted store's dump only: see signing.ts. */
  signature?: string;
}

/**
 * A row line: `row` as this Stead's schema has it (columns added since the dump's schema hold
 * null), and `asDumped`, the row in the dump's own schema, which its trailer's digests cover.
 */
export type DumpLine = { kind: "row"; table: TransferTable; row: TransferRow; asDumped: TransferRow; bytes: number } | { kind: "trailer"; trailer: DumpTrailer };

const FIX_DUMP = "import a complete dump written by `stead export`, unedited (export it again if in doubt)";

export function badDump(where: string, problem: string, fix = FIX_DUMP): SteadError {
  return new SteadError("STEAD_BAD_DUMP", `${where} ${problem}`, { fix });
}

/** A value as JSON for a message; a missing one says so. */
const shown = (v: unknown): string => (v === undefined ? "(missing)" : JSON.stringify(v));
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

function parseJson(text: string, name: string, lineNo: number): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw badDump(`${name} line ${lineNo}`, `is not valid JSON (${e instanceof Error ? e.message : String(e)})`);
  }
}

/** Tables absent from an older dump hold no rows; a table this code does not know is refused. */
function perTable<T>(value: unknown, name: string, what: string, check: (v: unknown) => v is T, empty: T): Record<TransferTable, T> {
  if (!isObject(value)) throw badDump(name, `has no per-table ${what}`);
  const out = {} as Record<TransferTable, T>;
  for (const key of Object.keys(value)) {
    if (!(TRANSFER_TABLES as readonly string[]).includes(key)) throw badDump(name, `names a table this Stead does not know: ${key}`, "upgrade stead to the version that wrote the dump");
  }
  for (const t of TRANSFER_TABLES) {
    const v = value[t] ?? empty;
    if (!check(v)) throw badDump(name, `has an invalid ${what} for table ${t}: ${shown(v)}`);
    out[t] = v;
  }
  return out;
}

const isDigest = (v: unknown): v is TableDigest => isObject(v) && isCount(v.rows) && typeof v.sha256 === "string" && /^[0-9a-f]{64}$/.test(v.sha256);
const EMPTY_DIGEST: TableDigest = { rows: 0, sha256: "0".repeat(64) };

export function parseHeader(text: string | undefined, name: string): DumpHeader {
  if (text === undefined) throw badDump(name, "is empty, not a Stead export");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (!isObject(value) || !("stead-export" in value)) throw badDump(name, "is not a Stead export (its first line is not an export header)", "pass a file written by `stead export`");
  const version = value["stead-export"];
  if (!Number.isSafeInteger(version) || (version as number) < 1) throw badDump(name, `has an invalid export version ${shown(version)}`);
  if ((version as number) > DUMP_VERSION) {
    throw badDump(name, `is a version ${String(version)} export, newer than this Stead reads (${DUMP_VERSION})`, "upgrade stead to the version that wrote the dump, then import again");
  }
  const schema = value.schema;
  if (!Number.isSafeInteger(schema) || (schema as number) < 1) throw badDump(name, `has an invalid schema version ${shown(schema)}`);
  if ((schema as number) > TRANSFER_SCHEMA_VERSION) {
    throw badDump(name, `holds a store of schema version ${String(schema)}, newer than this Stead's ${TRANSFER_SCHEMA_VERSION}`, "upgrade stead to the version that wrote the dump, then import again");
  }
  if (typeof value.source !== "string") throw badDump(name, "does not name its source store's dialect");
  if (value.digest !== DIGEST_NAME) throw badDump(name, `uses digest ${shown(value.digest)}, which this Stead does not know`, "upgrade stead to the version that wrote the dump");
  const keys = parseKeys(value.keys, name, version as number);
  return {
    "stead-export": version as number,
    schema: schema as number,
    source: value.source,
    digest: DIGEST_NAME,
    tables: perTable(value.tables, name, "row count", isCount, 0),
    ...(keys ? { keys } : {}),
  };
}

const isKeyRow = (v: unknown): v is DataKeyRow =>
  isObject(v) && typeof v.id === "string" && v.id !== "" && typeof v.kekId === "string" && v.kekId !== "" && typeof v.wrapped === "string" && v.wrapped !== "" && isCount(v.createdAt);

/** Version 2 carries the store's keys, at least one; version 1 none. */
function parseKeys(value: unknown, name: string, version: number): DataKeyRow[] | undefined {
  if (version < 2) {
    if (value !== undefined) throw badDump(name, "is a version 1 (plain) export, yet its header carries keys");
    return undefined;
  }
  if (!Array.isArray(value) || value.length === 0) throw badDump(name, "is a version 2 (encrypted) export without its keys");
  const bad: unknown = (value as unknown[]).find((k) => !isKeyRow(k));
  if (bad !== undefined) throw badDump(name, `has an invalid key in its header: ${shown(bad)}`);
  const ids = (value as DataKeyRow[]).map((k) => k.id);
  const twice = ids.find((id, i) => ids.indexOf(id) !== i);
  if (twice !== undefined) throw badDump(name, `has key ${JSON.stringify(twice)} twice in its header`);
  return (value as DataKeyRow[]).map((k) => ({ id: k.id, kekId: k.kekId, wrapped: k.wrapped, createdAt: k.createdAt }));
}

/**
 * Parses one line after the header of a dump of schema version `schema`. Rows must come table by
 * table in TRANSFER_TABLES order; `lastTable` is the index of the previous row's table (-1 before the first row).
 */
export function parseLine(text: string, name: string, lineNo: number, lastTable: number, schema = TRANSFER_SCHEMA_VERSION): DumpLine {
  const where = `${name} line ${lineNo}`;
  const value = parseJson(text, name, lineNo);
  if (!isObject(value)) throw badDump(where, "is not a dump line");
  if ("stead-export-end" in value) {
    if (value["stead-export-end"] !== TRAILER_VERSION) throw badDump(where, `has an invalid trailer version ${shown(value["stead-export-end"])}`);
    const signature = value.signature;
    if (signature !== undefined && (typeof signature !== "string" || !/^[0-9a-f]{64}$/.test(signature))) throw badDump(where, `has an invalid signature ${shown(signature)}`);
    return { kind: "trailer", trailer: { "stead-export-end": TRAILER_VERSION, tables: perTable(value.tables, where, "digest", isDigest, EMPTY_DIGEST), ...(signature !== undefined ? { signature } : {}) } };
  }
  const table = value.t;
  const index = (TRANSFER_TABLES as readonly unknown[]).indexOf(table);
  if (index < 0) throw badDump(where, `names an unknown table ${shown(table)}`);
  if (index < lastTable) throw badDump(where, `is a ${String(table)} row after the ${TRANSFER_TABLES[lastTable]} rows: the dump is out of order`);
  if (!isObject(value.r)) throw badDump(where, "has no row object");
  const { row, asDumped } = canonicalRow(table as TransferTable, value.r as TransferRow, where, schema);
  return { kind: "row", table: table as TransferTable, row, asDumped, bytes: text.length };
}
