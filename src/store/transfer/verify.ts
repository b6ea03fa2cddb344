import type { StoreLifecycle, TransferRows, TransferTable } from "../types.js";
import { TRANSFER_TABLES } from "../types.js";
import { digestDifferences, digestStore, type TableDigest } from "./digest.js";

export interface StoreComparison {
  /** Every table has the same row count and digest in both stores. */
  equal: boolean;
  tables: Record<TransferTable, { a: TableDigest; b: TableDigest; equal: boolean }>;
  /** One line per differing table, naming both stores by location. */
  differences: string[];
}

/** Compares two stores (of any dialects) table by table: row counts and row digests. */
export async function verifyStores(a: StoreLifecycle & TransferRows, b: StoreLifecycle & TransferRows): Promise<StoreComparison> {
  const [da, db] = [await digestStore(a), await digestStore(b)];
  const differences = digestDifferences(da, db, a.location, b.location);
  const tables = Object.fromEntries(
    TRANSFER_TABLES.map((t) => [t, { a: da[t], b: db[t], equal: da[t].rows === db[t].rows && da[t].sha256 === db[t].sha256 }]),
  ) as StoreComparison["tables"];
  return { equal: differences.length === 0, tables, differences };
}
