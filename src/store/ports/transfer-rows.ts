/**
 * Raw rows of the transfer tables, for `stead export` / `stead import` (`transfer/`): the only
 * port that speaks the schema's own column names and bypasses the guarded write protocol.
 */
import type { RowKey, TransferRow, TransferTable } from "../records.js";

export interface TransferRows {
  /**
   * Export: up to `limit` rows of `table` whose primary key is greater than `afterKey` (null: from
   * the start), in primary-key order, every column of `transfer/tables.ts` normalised to a
   * `TransferValue`. Text keys follow the store's own collation, so two dialects may page a
   * table in different orders; the transfer digests do not depend on row order. Not a snapshot:
   * pages read while workers write may disagree with each other.
   */
  readRows(table: TransferTable, afterKey: RowKey | null, limit: number): Promise<TransferRow[]>;

  /**
   * Import: inserts `rows` exactly as given (ids, seq numbers, fences, timestamps kept) in one
   * transaction; a row whose key exists fails the whole call. Afterwards the store's own id
   * sequences (holds.id, events.seq) continue past the largest imported id.
   */
  writeRows(table: TransferTable, rows: readonly TransferRow[]): Promise<void>;
}
