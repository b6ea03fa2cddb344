/**
 * SQLite's event stream: a position is a sequence number, `s` and the number in base 36.
 *
 * Invariant: seq order is commit order here. Every write that inserts events (createRun, commit,
 * claim, expireLease, an import's writeRows) runs in a BEGIN IMMEDIATE transaction, which holds
 * the database's one write lock from its first statement to its COMMIT, across processes; a new
 * event is numbered max(seq) + 1 under that lock. So a reader's snapshot holds every event up to
 * the highest number it sees, and no later commit adds one below it.
 *
 * Hazard: max + 1 would hand out a deleted row's number again. The one delete, a compaction of live
 * model text, inserts its marker first and deletes only rows below it (mutation/plan.ts), so the
 * highest number is never deleted and a position is never numbered again.
 */
import type Database from "better-sqlite3";
import { toEvent } from "../rows.js";
import type { EventPage, EventStreamFilter } from "../types.js";
import { badPosition, base36, checkStreamFilter, positionText } from "../event-stream.js";

type Raw = Record<string, unknown>;

const encode = (seq: number): string => `s${seq.toString(36)}`;

function decode(position: string | null): number {
  if (position === null) return 0;
  const text = positionText(position);
  const seq = text.startsWith("s") ? base36(text.slice(1)) : undefined;
  if (seq === undefined) throw badPosition(position, "is not a position of an SQLite store's event stream");
  return seq;
}

export function sqliteEventsAfter(db: Database.Database, stmt: (sql: string) => Database.Statement, position: string | null, filter: EventStreamFilter): EventPage {
  const after = decode(position);
  const { runIds, limit } = checkStreamFilter(filter);
  // One read transaction: the highest number and the page come from the same snapshot.
  const read = db.transaction(() => {
    const top = Number((stmt("SELECT coalesce(max(seq), 0) AS top FROM events").get() as Raw).top);
    if (after > top) throw badPosition(position, `is past this store's last event (${top}): it came from another store`);
    if (runIds?.length === 0) return { top, rows: [] as Raw[] };
    const rows =
      runIds === null
        ? (stmt("SELECT * FROM events WHERE seq > ? ORDER BY seq LIMIT ?").all(after, limit + 1) as Raw[])
        : (stmt("SELECT * FROM events WHERE seq > ? AND run_id IN (SELECT value FROM json_each(?)) ORDER BY seq LIMIT ?").all(after, JSON.stringify(runIds), limit + 1) as Raw[]);
    return { top, rows };
  });
  const { top, rows } = read.deferred();
  if (rows.length > limit) {
    const page = rows.slice(0, limit).map(toEvent);
    const positions = page.map((e) => encode(e.seq));
    return { events: page, position: positions[positions.length - 1] ?? encode(after), positions };
  }
  // Everything up to the snapshot's last event was read: the next read starts past it, whatever its filter.
  const events = rows.map(toEvent);
  const end = encode(top);
  return { events, position: end, positions: events.map((e, i) => (i === events.length - 1 ? end : encode(e.seq))) };
}
