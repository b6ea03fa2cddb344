/**
 * A store's rows, table by table in key order, for export and import on SQLite (ports/transfer-
 * rows.ts).
 */
import type { TransferRows } from "../ports/transfer-rows.js";
import type { SqliteConnection } from "./connection.js";
import type { RowKey, TransferRow, TransferTable } from "../types.js";
import { columnNames, keyColumns, normaliseRow, quoteColumn, rowValues, tableSchema } from "../transfer/tables.js";

type Raw = Record<string, unknown>;

export function sqliteTransferRows(c: SqliteConnection): TransferRows {
  return {
    readRows(table: TransferTable, afterKey: RowKey | null, limit: number): Promise<TransferRow[]> {
      const key = keyColumns(table).map((k) => quoteColumn(k.name));
      const where = afterKey === null ? "" : `WHERE (${key.join(", ")}) > (${key.map(() => "?").join(", ")})`;
      const sql = `SELECT ${columnNames(table).map(quoteColumn).join(", ")} FROM ${table} ${where} ORDER BY ${key.join(", ")} LIMIT ?`;
      return c.read(() => (c.stmt(sql).all(...(afterKey ?? []), limit) as Raw[]).map((r) => normaliseRow(table, r)));
    },
    // Explicit ids need no sequence fix-up here: events.seq is the rowid (next = max + 1) and
    // AUTOINCREMENT moves sqlite_sequence past an explicit holds.id by itself.
    async writeRows(table: TransferTable, rows: readonly TransferRow[]): Promise<void> {
      const cols = columnNames(table);
      const insert = c.stmt(`INSERT INTO ${table} (${cols.map(quoteColumn).join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`);
      const kinds = tableSchema(table).columns.map((c) => c.kind);
      c.written(() => c.db.transaction(() => {
        rows.forEach((row, i) => {
          const values = rowValues(table, row, `writeRows row ${i + 1}`);
          insert.run(...values.map((v, j) => (typeof v === "boolean" ? (v ? 1 : 0) : kinds[j] === "bytes" && typeof v === "string" ? Buffer.from(v, "base64") : v)));
        });
      }).immediate());
      if (table === "runs" && rows.length > 0) c.wake();
      return Promise.resolve();
    },
  };
}
