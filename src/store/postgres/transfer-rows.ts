/**
 * A store's rows, table by table in key order, for export and import on Postgres (ports/transfer-
 * rows.ts).
 */
import type { TransferRows } from "../ports/transfer-rows.js";
import type { ColumnKind } from "../transfer/tables.js";
import type { PostgresConnection } from "./connection.js";
import type { RowKey, TransferRow, TransferTable } from "../types.js";
import { keyColumns, normaliseRow, quoteColumn, rowValues, tableSchema } from "../transfer/tables.js";
import { WAKE_CHANNEL } from "./store-names.js";

/** The Postgres type a transfer column is read and written as (INTEGER columns take bigint values by assignment). */
const SQL_TYPE: Record<ColumnKind, string> = { text: "text", int: "bigint", bool: "boolean", bytes: "text" };

export function postgresTransferRows(pg: PostgresConnection): TransferRows {
  return {
    async readRows(table: TransferTable, afterKey: RowKey | null, limit: number): Promise<TransferRow[]> {
      const key = keyColumns(table);
      const names = key.map((k) => quoteColumn(k.name)).join(", ");
      const params: unknown[] = [...(afterKey ?? [])];
      const where = afterKey === null ? "" : `WHERE (${names}) > (${key.map((k, i) => `$${i + 1}::${SQL_TYPE[k.kind]}`).join(", ")})`;
      params.push(limit);
      const cols = tableSchema(table).columns.map((c) => quoteColumn(c.name)).join(", ");
      const rows = await pg.query(`SELECT ${cols} FROM ${table} ${where} ORDER BY ${names} LIMIT $${params.length}`, params);
      return rows.map((r) => normaliseRow(table, r));
    },
    async writeRows(table: TransferTable, rows: readonly TransferRow[]): Promise<void> {
      if (rows.length === 0) return;
      const schema = tableSchema(table);
      const payload = JSON.stringify(
        rows.map((row, i) => {
          const values = rowValues(table, row, `writeRows row ${i + 1}`);
          return Object.fromEntries(schema.columns.map((c, j) => [c.name, values[j] ?? null]));
        }),
      );
      const cols = schema.columns.map((c) => quoteColumn(c.name)).join(", ");
      const defs = schema.columns.map((c) => `${quoteColumn(c.name)} ${SQL_TYPE[c.kind]}`).join(", ");
      await pg.transaction(async (c) => {
        // A bytes column travels as base64 text (bytea's own text input is hex, not base64).
        const select = schema.columns.map((c) => (c.kind === "bytes" ? `decode(${quoteColumn(c.name)}, 'base64')` : quoteColumn(c.name))).join(", ");
        await c.query(`INSERT INTO ${table} (${cols}) SELECT ${select} FROM jsonb_to_recordset($1::jsonb) AS x(${defs})`, [payload]);
        // Explicit ids leave the BIGSERIAL sequence behind: the next insert would collide with an imported id.
        if (schema.serial) {
          const s = quoteColumn(schema.serial);
          await c.query(`SELECT setval(pg_get_serial_sequence('${table}', '${schema.serial}'), coalesce(max(${s}), 1), max(${s}) IS NOT NULL) FROM ${table}`);
        }
        if (table === "runs") await c.query("SELECT pg_notify($1, '')", [WAKE_CHANNEL]);
      });
    },
  };
}
