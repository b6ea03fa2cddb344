import type Database from "better-sqlite3";
import type { EventWrite, StepRow } from "../records.js";
import { SQLITE_DIALECT } from "../sql/dialect.js";
import type { SqlDriver } from "../sql/driver.js";

/**
 * What a port's statements need of an open SQLite store, and all they get: each port file
 * (claims.ts, …) takes this, not the store. Hazard: a statement run on `db` directly, outside
 * `written` or `read`, skips the file-identity check that tells a vanished store from a live one.
 */
export interface SqliteConnection {
  readonly db: Database.Database;
  /** A prepared statement for `sql` (`?` placeholders), cached by its text. */
  stmt(sql: string): Database.Statement;
  /** A write (one transaction, or one statement), under the store's checks; its faults as Stead's. */
  written<T>(fn: () => T): T;
  /** `written`, as a promise: a refusal (a taken name, the store lost) rejects, never throws. */
  write<T>(fn: () => T): Promise<T>;
  /**
   * A retention delete (one write) whose freed bytes are overwritten, not just unlinked (see the
   * store's `erasing`): every delete of runs, snapshots or blobs goes through here.
   */
  erasing<T>(fn: () => T): T;
  /** A read, under the same checks, as a promise (a refusal rejects). */
  read<T>(fn: () => T): Promise<T>;
  /** `events` of `runId` written at `at`, inside the caller's transaction. */
  insertEvents(runId: string, events: readonly EventWrite[] | undefined, at: number): void;
  /** A run's journal, inside the caller's transaction. */
  journal(runId: string): StepRow[];
  /** After a write that may make runs claimable, outside its transaction: this process's workers look now. */
  wake(): void;
}

/** The narrow driver (sql/driver.ts) over `c`: its reads under the store's checks. */
export function sqliteDriver(c: SqliteConnection): SqlDriver {
  return {
    dialect: SQLITE_DIALECT,
    all: (sql, params = []) => c.read(() => c.stmt(sql).all(...params) as Record<string, unknown>[]),
    run: (s) =>
      c.write(() => {
        const st = c.stmt(s.sql);
        if (st.reader) return st.all(...s.params) as Record<string, unknown>[];
        st.run(...s.params);
        return [];
      }),
    transact: (statements, check) =>
      c.write(() =>
        c.db
          .transaction(() => {
            const results = statements.map((s) => {
              const st = c.stmt(s.sql);
              return st.reader ? { rows: st.all(...s.params) as Record<string, unknown>[], changes: 0 } : { rows: [], changes: st.run(...s.params).changes };
            });
            check?.(results);
            return results;
          })
          .immediate(),
      ),
  };
}
