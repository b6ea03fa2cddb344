/**
 * Row mappers shared by every SQL store, made from the schema description (`schema/tables.ts`):
 * a column `step_id` is the field `stepId`. Drivers hand back text, numbers (or numeric strings
 * for 64-bit integers), booleans or 0/1. Kinds and statuses are passed through as stored text,
 * never checked against their unions: a kind a newer Stead wrote reads back unchanged.
 *
 * Each row type is checked against its table at compile time (`Conforms` below): a column added to
 * the description without its field, or a field whose nullability differs, fails the typecheck.
 */
import type { AnnouncementRow, DataKeyRow, DefinitionRow, EventRow, IdempotencyRow, HoldRow, RunRow, RunStatus, SessionSummary, SnapshotRow, StepRow, TokenRecord, TokenRow, WaitRow } from "./types.js";
import type { ColumnSpec, Dialect, LogicalType } from "./schema/model.js";
import { TABLES, type TableName } from "./schema/tables.js";
import { sealedTextOfBytes } from "./encryption/cipher.js";

type Raw = Record<string, unknown>;

// SQLite hands back strings, numbers, bigints, buffers or null; columns read here are text or
// integers, and a text column may hold a sealed text as its bytes (cipher.ts).
const str = (v: unknown): string =>
  typeof v === "string" ? v : typeof v === "number" || typeof v === "bigint" ? v.toString() : ((v instanceof Uint8Array ? sealedTextOfBytes(v) : null) ?? JSON.stringify(v));
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : str(v));
const num = (v: unknown): number => Number(v);
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

type Camel<S extends string> = S extends `${infer H}_${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;
const camel = (s: string): string => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

type Value<T extends LogicalType> = T extends "text" ? string : T extends "bool" ? boolean : T extends "bytes" ? Buffer : number;
/** A table's columns that are fields of its rows: a dialect's bookkeeping columns are not. */
type Columns<T extends TableName> = Exclude<(typeof TABLES)[T]["columns"][number], { only: Dialect }>;
/** The row a table's description gives, fields in camelCase. */
export type RowOf<T extends TableName> = {
  [C in Columns<T> as Camel<C["name"]>]: C extends { nullable: true } ? Value<C["type"]> | null : Value<C["type"]>;
};

/** `R` has exactly the fields of table `T`, each of its logical type (or narrower) and nullable exactly when the column is. */
type Conforms<T extends TableName, R> = [keyof R] extends [keyof RowOf<T>]
  ? [keyof RowOf<T>] extends [keyof R]
    ? R extends RowOf<T>
      ? { [K in keyof R & keyof RowOf<T>]: (null extends R[K] ? true : false) extends (null extends RowOf<T>[K] ? true : false) ? true : K }[keyof R & keyof RowOf<T>] extends true
        ? true
        : false
      : false
    : false
  : false;

const conforms = <T extends TableName, R>(ok: Conforms<T, R>): Conforms<T, R> => ok;
conforms<"runs", RunRow>(true);
conforms<"steps", StepRow>(true);
conforms<"waits", WaitRow>(true);
conforms<"holds", HoldRow>(true);
conforms<"events", EventRow>(true);
conforms<"idempotency_keys", IdempotencyRow>(true);
conforms<"snapshots", SnapshotRow>(true);
conforms<"tokens", TokenRow>(true);
conforms<"definitions", DefinitionRow>(true);
conforms<"announcements", AnnouncementRow>(true);

function reader(c: ColumnSpec): (v: unknown) => unknown {
  switch (c.type) {
    case "text":
      return c.nullable ? strOrNull : str;
    case "bool":
      return (v) => (c.nullable && (v === null || v === undefined) ? null : num(v) !== 0);
    case "bytes":
      return (v) => (c.nullable && (v === null || v === undefined) ? null : Buffer.isBuffer(v) ? v : Buffer.from(v as Uint8Array));
    default:
      return c.nullable ? numOrNull : num;
  }
}

/**
 * A driver's row (snake_case columns) of `table` as its typed row. `order`: the fields' order in
 * the object, when it is not the columns' (a row's JSON, as people and scripts see it, keeps it).
 */
export function rowMapper<T extends TableName, R>(table: T & (Conforms<T, R> extends true ? T : never), order?: readonly (keyof R & string)[]): (r: Raw) => R {
  const columns = (TABLES[table].columns as readonly ColumnSpec[]).filter((c) => c.only === undefined);
  const byField = new Map(columns.map((c) => [camel(c.name), c]));
  if (order && (order.length !== columns.length || order.some((f) => !byField.has(f)))) throw new Error(`rowMapper(${table}): the order must name every field once`);
  const fields = (order ?? [...byField.keys()]).map((f) => {
    const c = byField.get(f) as ColumnSpec;
    return { column: c.name, field: f, read: reader(c) };
  });
  return (r) => {
    const out: Raw = {};
    for (const f of fields) out[f.field] = f.read(r[f.column]);
    return out as R;
  };
}

// A run's timestamps come last, as they did before the columns added by later migrations.
export const toRun = rowMapper<"runs", RunRow>("runs", [
  "id", "definition", "module", "fingerprint", "status", "input", "output", "error", "parentId", "parentStepId", "fence", "leaseOwner",
  "leaseExpiresAt", "ownerHost", "ownerPid", "ownerStart", "lostClaims", "pauseRequested", "sessionId", "turn", "workspace", "outputRefs", "createdAt", "updatedAt",
]);
/**
 * The row an INSERT of `values` (by column name) leaves in `table`, as `mapper` reads it: a column
 * the insert does not name holds its declared default, else null. A store returns it instead of
 * reading back the row it just wrote: on SQLite, `RETURNING *` cost as much again as the insert.
 * Hazard: a default given only as SQL (`defaultSql`) is unknown here; only a dialect's
 * bookkeeping columns have one, and no mapper reads those.
 */
export function insertedRow<R>(table: TableName, mapper: (r: Raw) => R, values: Raw): R {
  const row: Raw = {};
  for (const c of TABLES[table].columns as readonly ColumnSpec[]) row[c.name] = c.name in values ? (values[c.name] ?? null) : (c.default ?? null);
  return mapper(row);
}
export const toStep = rowMapper<"steps", StepRow>("steps");
export const toWait = rowMapper<"waits", WaitRow>("waits");
export const toHold = rowMapper<"holds", HoldRow>("holds");
export const toEvent = rowMapper<"events", EventRow>("events");
export const toIdempotency = rowMapper<"idempotency_keys", IdempotencyRow>("idempotency_keys");
export const toSnapshot = rowMapper<"snapshots", SnapshotRow>("snapshots");
export const toToken = rowMapper<"tokens", TokenRow>("tokens");
export const toDataKey = rowMapper<"data_keys", DataKeyRow>("data_keys");

/** A token's row read without its hash column (sql/tokens.ts): the record, with no `hash` field at all. */
export function toTokenRecord(r: Raw): TokenRecord {
  const { hash: _none, ...record } = toToken({ ...r, hash: "" });
  return record;
}
export const toDefinition = rowMapper<"definitions", DefinitionRow>("definitions");
export const toAnnouncement = rowMapper<"announcements", AnnouncementRow>("announcements");

/** A row of the stores' session summary query (see SESSIONS_SQL in each store). */
export function toSession(r: Raw): SessionSummary {
  const current = r.current_id === null || r.current_id === undefined ? null : { runId: str(r.current_id), turn: num(r.current_turn), status: str(r.current_status) as RunStatus };
  const last =
    r.last_id === null || r.last_id === undefined
      ? null
      : { runId: str(r.last_id), turn: num(r.last_turn), status: str(r.last_status) as RunStatus, error: strOrNull(r.last_error) };
  return {
    sessionId: str(r.session_id),
    definition: str(r.definition),
    turns: num(r.turns),
    open: num(r.open_turns),
    current,
    last,
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
  };
}
