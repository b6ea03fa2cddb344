/**
 * Reads of runs, journals, waits, holds, events and sessions on SQLite (ports/run-reads.ts), each
 * under the store's file-identity check (the connection's read).
 */
import type { RunReads } from "../ports/run-reads.js";
import type {
  EventFilter,
  EventPage,
  EventRow,
  EventStreamFilter,
  HoldFilter,
  HoldRow,
  RunActivity,
  RunFilter,
  RunPage,
  RunQuery,
  RunRow,
  SessionFilter,
  SessionSummary,
  StepRow,
  WaitRow,
} from "../types.js";
import { toEvent, toHold, toRun, toSession, toStep, toWait } from "../rows.js";
import { sessionsSql } from "../sql/sessions.js";
import type { SqliteConnection } from "./connection.js";
import { SQLITE_DIALECT as SQL } from "../sql/dialect.js";
import * as reads from "../sql/reads.js";
import * as listing from "../sql/run-listing.js";
import { checkRunFilter, checkRunIds, checkRunQuery, pageOf } from "../listing-cursor.js";
import { sqliteEventsAfter } from "./event-stream.js";

type Raw = Record<string, unknown>;

export function sqliteRunReads(c: SqliteConnection): RunReads {
  return {
    getRun(id: string): Promise<RunRow | undefined> {
      return c.read(() => {
        const r = c.stmt(reads.RUN_BY_ID).get(id) as Raw | undefined;
        return r ? toRun(r) : undefined;
      });
    },
    listRuns(query: RunQuery = {}): Promise<RunPage> {
      return c.read(() => {
        const q = checkRunQuery(query);
        const sql = listing.listRunsQuery(SQL, q);
        return pageOf(q, (c.stmt(sql.sql).all(...sql.params) as Raw[]).map(toRun));
      });
    },
    countRuns(filter: RunFilter = {}): Promise<number> {
      return c.read(() => {
        const q = listing.countRunsQuery(SQL, checkRunFilter(filter));
        return (c.stmt(q.sql).get(...q.params) as { n: number }).n;
      });
    },
    runActivity(runIds: readonly string[]): Promise<RunActivity[]> {
      return c.read(() => {
        const ids = checkRunIds(runIds);
        if (ids.length === 0) return [];
        const all = (q: { sql: string; params: unknown[] }) => c.stmt(q.sql).all(...q.params) as Raw[];
        // One read transaction: the four reads see one state of the store.
        const rows = c.db.transaction(() => ({
          steps: all(listing.lastStepsQuery(SQL, ids)),
          events: all(listing.lastEventsQuery(SQL, ids)),
          waits: all(listing.openWaitsQuery(SQL, ids)).map(toWait),
          holds: all(listing.openHoldsQuery(SQL, ids)).map(toHold),
        }))();
        return listing.assembleActivity(ids, rows);
      });
    },
    completedStep(runId: string, stepId: string): Promise<StepRow | undefined> {
      return c.read(() => {
        const r = c.stmt(listing.COMPLETED_STEP).get(runId, stepId) as Raw | undefined;
        return r ? toStep(r) : undefined;
      });
    },
    journal(runId: string): Promise<StepRow[]> {
      return c.read(() => c.journal(runId));
    },
    waits(runId: string): Promise<WaitRow[]> {
      return c.read(() => (c.stmt(reads.WAITS_OF_RUN).all(runId) as Raw[]).map(toWait));
    },
    dueTimers(now: number, limit: number): Promise<WaitRow[]> {
      return c.read(() => (c.stmt(reads.DUE_TIMERS).all(now, limit) as Raw[]).map(toWait));
    },
    holds(filter: HoldFilter = {}): Promise<HoldRow[]> {
      return c.read(() => {
        const q = reads.holds(SQL, filter);
        return (c.stmt(q.sql).all(...q.params) as Raw[]).map(toHold);
      });
    },
    events(filter: EventFilter = {}): Promise<EventRow[]> {
      return c.read(() => {
        const q = reads.events(SQL, filter);
        return (c.stmt(q.sql).all(...q.params) as Raw[]).map(toEvent);
      });
    },
    // A refused position reaches the caller as a rejection.
    eventsAfter(position: string | null, filter: EventStreamFilter = {}): Promise<EventPage> {
      return c.read(() => sqliteEventsAfter(c.db, (sql) => c.stmt(sql), position, filter));
    },
    listSessions(filter: SessionFilter = {}): Promise<SessionSummary[]> {
      return c.read(() => {
        const bySession = filter.sessionId !== undefined;
        const params: unknown[] = bySession ? [filter.sessionId, filter.limit ?? 1000] : [filter.limit ?? 1000];
        return (c.stmt(sessionsSql(bySession)).all(...params) as Raw[]).map(toSession);
      });
    },
  };
}
