/**
 * What differs between the SQL dialects in the statements both stores share: placeholders
 * (SQLite `?`, Postgres `$1`, `$2`, …) and a text column's membership in a list of values
 * (SQLite binds a JSON array, Postgres a text[]). Shared statements are written with `?` and pass
 * through `text` before they are prepared.
 */
/** What a database can do that shared code asks about, instead of asking for its name. */
export interface SqlCapabilities {
  /** Wakes other processes from inside its commit (LISTEN/NOTIFY); otherwise only this process hears. */
  readonly notify: boolean;
  /** Takes rows no other transaction has locked, skipping the rest (FOR UPDATE SKIP LOCKED). */
  readonly skipLocked: boolean;
  /** The store is one file this process opened (its identity checked on each use, its pages bounded). */
  readonly oneFile: boolean;
  /** LATERAL joins: a per-row subquery with its own LIMIT. */
  readonly lateral: boolean;
  /**
   * A compound's branches are merged in its ORDER BY, each walking its index lazily and stopping at
   * the LIMIT (SQLite's co-routines); without it, each branch is limited itself (Postgres's Merge Append).
   */
  readonly mergesCompoundByIndex: boolean;
}

export interface SqlDialect {
  readonly name: "sqlite" | "postgres";
  readonly capabilities: SqlCapabilities;
  /** `sql`, written with `?` placeholders, in this dialect's placeholders. */
  text(sql: string): string;
  /** `column` equals one of `values`: one `?` in `sql`, bound to `param`. */
  anyOf(column: string, values: readonly string[]): { sql: string; param: unknown };
  /**
   * `column` compared with one `?` by code point order (UTF-8 bytes), whatever the database's
   * collation: SQLite's BINARY text, Postgres's pattern operators (which only the
   * text_pattern_ops index runs_id_pattern serves).
   */
  bytewise(column: string, op: ">=" | "<"): string;
  /** A one-column table `(id)` of `values`: one `?` in `sql`, bound to `param`. */
  idTable(values: readonly string[]): { sql: string; param: unknown };
  /**
   * The time (ms) lease times are judged by, given the caller's `now`: SQLite's is the caller's
   * (one host, one clock: one `?`); Postgres's is the database's own (`stead_now_ms()`), since the
   * clocks of workers on many hosts may disagree, and `now` is not bound.
   */
  clock(now: number): { sql: string; params: unknown[] };
}

/**
 * `?` → `$1`, `$2`, … outside quoted text. Hazard: Postgres's jsonb `?` operators would be taken
 * for placeholders, so shared statements never use them.
 */
export function numbered(sql: string): string {
  let n = 0;
  let out = "";
  let quote: string | undefined;
  for (const ch of sql) {
    if (quote) {
      if (ch === quote) quote = undefined;
      out += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      out += ch;
    } else out += ch === "?" ? `$${++n}` : ch;
  }
  return out;
}

const numberedCache = new Map<string, string>();

export const SQLITE_DIALECT: SqlDialect = {
  name: "sqlite",
  capabilities: { notify: false, skipLocked: false, oneFile: true, lateral: false, mergesCompoundByIndex: true },
  text: (sql) => sql,
  anyOf: (column, values) => ({ sql: `${column} IN (SELECT value FROM json_each(?))`, param: JSON.stringify(values) }),
  bytewise: (column, op) => `${column} ${op} ?`,
  idTable: (values) => ({ sql: "(SELECT value AS id FROM json_each(?))", param: JSON.stringify(values) }),
  clock: (now) => ({ sql: "?", params: [now] }),
};

export const POSTGRES_DIALECT: SqlDialect = {
  name: "postgres",
  capabilities: { notify: true, skipLocked: true, oneFile: false, lateral: true, mergesCompoundByIndex: false },
  text: (sql) => {
    let t = numberedCache.get(sql);
    if (t === undefined) {
      t = numbered(sql);
      // Statements with filters vary, but over a few dozen shapes: the cache stays small.
      if (numberedCache.size < 1000) numberedCache.set(sql, t);
    }
    return t;
  },
  anyOf: (column, values) => ({ sql: `${column} = ANY(?::text[])`, param: values }),
  bytewise: (column, op) => `${column} ~${op}~ ?`,
  idTable: (values) => ({ sql: "(SELECT unnest(?::text[]) AS id)", param: values }),
  clock: () => ({ sql: "stead_now_ms()", params: [] }),
};
