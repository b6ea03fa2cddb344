import { createHash } from "node:crypto";
import { TRANSFER_TABLES, type KeyedDigest, type RowKey, type TransferRow, type TransferRows, type TransferTable } from "../types.js";
import { rowKey, tableSchema } from "./tables.js";

/** A table's row count and digest, as a dump's trailer records them. */
export interface TableDigest {
  rows: number;
  /** 64 hex digits: see {@link TableDigester}. */
  sha256: string;
}

export type StoreDigest = Record<TransferTable, TableDigest>;

const MOD = (1n << 256n) - 1n;

/**
 * The digest of a table: the sum, modulo 2^256, of the SHA-256 of each row's canonical JSON (its
 * columns in `tables.ts` order). A sum, so that it does not depend on row order: two dialects page
 * text keys in their own collation order (SQLite by bytes, Postgres by the database's locale), and
 * a table must digest the same on both. A changed, missing or extra row changes it.
 *
 * Unkeyed, it detects damage, not edits: whoever edits the rows can compute it again. Given a
 * keyed digest (an encrypted store's, see signing.ts) each row's hash is keyed instead, and only a
 * holder of the key can make the sum come out right; a sum of unkeyed hashes would not do even
 * under a keyed signature, since rows can be chosen to add up to a given sum.
 */
export class TableDigester {
  private sum = 0n;
  private count = 0;

  constructor(private readonly keyed?: KeyedDigest) {}

  add(canonicalJson: string): void {
    this.count++;
    const hex = this.keyed ? this.keyed(`row\0${canonicalJson}`) : createHash("sha256").update(canonicalJson, "utf8").digest("hex");
    this.sum = (this.sum + BigInt(`0x${hex}`)) & MOD;
  }

  digest(): TableDigest {
    return { rows: this.count, sha256: this.sum.toString(16).padStart(64, "0") };
  }
}

export const DEFAULT_PAGE_ROWS = 500;

/** Every row of `table`, a page at a time, in the store's primary-key order. */
export async function* pagesOf(store: TransferRows, table: TransferTable, requestedRows = DEFAULT_PAGE_ROWS): AsyncGenerator<TransferRow[]> {
  const pageRows = Math.min(requestedRows, tableSchema(table).pageRows ?? requestedRows);
  let after: RowKey | null = null;
  for (;;) {
    const page = await store.readRows(table, after, pageRows);
    if (page.length === 0) return;
    yield page;
    if (page.length < pageRows) return;
    after = rowKey(table, page[page.length - 1] as TransferRow);
  }
}

/** Row counts and digests of every transfer table of `store`, read back through `readRows` (each row's hash keyed by `keyed` when given). */
export async function digestStore(store: TransferRows, pageRows = DEFAULT_PAGE_ROWS, keyed?: KeyedDigest): Promise<StoreDigest> {
  const out = {} as StoreDigest;
  for (const table of TRANSFER_TABLES) {
    const d = new TableDigester(keyed);
    for await (const page of pagesOf(store, table, pageRows)) for (const row of page) d.add(JSON.stringify(row));
    out[table] = d.digest();
  }
  return out;
}

/** Digesters of every transfer table, keyed by `keyed` when given. */
export function tableDigesters(keyed?: KeyedDigest): Record<TransferTable, TableDigester> {
  return Object.fromEntries(TRANSFER_TABLES.map((t) => [t, new TableDigester(keyed)])) as Record<TransferTable, TableDigester>;
}

/** The digests of `digesters`, table by table. */
export function digestsOf(digesters: Record<TransferTable, TableDigester>): StoreDigest {
  return Object.fromEntries(TRANSFER_TABLES.map((t) => [t, digesters[t].digest()])) as StoreDigest;
}

/** One line per table whose count or digest differs, naming both sides; empty when they agree. */
export function digestDifferences(a: StoreDigest, b: StoreDigest, aName: string, bName: string): string[] {
  const out: string[] = [];
  for (const table of TRANSFER_TABLES) {
    const x = a[table];
    const y = b[table];
    if (x.rows !== y.rows) out.push(`${table}: ${x.rows} rows in ${aName}, ${y.rows} in ${bName}`);
    else if (x.sha256 !== y.sha256) out.push(`${table}: the ${x.rows} rows differ (digest ${x.sha256.slice(0, 12)}… in ${aName}, ${y.sha256.slice(0, 12)}… in ${bName})`);
  }
  return out;
}
