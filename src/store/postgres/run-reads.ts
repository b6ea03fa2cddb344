/**
 * Reads of runs, journals, waits, holds, events and sessions on Postgres (ports/run-reads.ts).
 */
import type { RunReads } from "../ports/run-reads.js";
import { toEvent, toHold, toRun, toSession, toStep, toWait } from "../rows.js";
import { POSTGRES_DIALECT as SQL } from "../sql/dialect.js";
import * as reads from "../sql/reads.js";
import * as listing from "../sql/run-listing.js";
import { checkRunFilter, checkRunIds, checkRunQuery, pageOf } from "../listing-cursor.js";
import { sessionsSql } from "../sql/sessions.js";
import type { PostgresConnection } from "./connection.js";
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
import { checkedStream, streamPage, streamQuery } from "./event-stream.js";

export function postgresRunReads(pg: PostgresConnection): RunReads {
  return {
    async getRun(id: string): Promise<RunRow | undefined> {
      const [r] = await pg.query(SQL.text(reads.RUN_BY_ID), [id]);
      return r ? toRun(r) : undefined;
    },
    async listRuns(query: RunQuery = {}): Promise<RunPage> {
      const q = checkRunQuery(query);
      const sql = listing.listRunsQuery(SQL, q);
      return pageOf(q, (await pg.query(sql.sql, sql.params)).map(toRun));
    },
    async countRuns(filter: RunFilter = {}): Promise<number> {
      const q = listing.countRunsQuery(SQL, checkRunFilter(filter));
      const rows = await pg.query(q.sql, q.params);
      return Number((rows[0] as { n?: unknown } | undefined)?.n ?? 0);
    },
    async runActivity(runIds: readonly string[]): Promise<RunActivity[]> {
      const ids = checkRunIds(runIds);
      if (ids.length === 0) return [];
      const rows = async (q: { sql: string; params: unknown[] }) => pg.query(q.sql, q.params);
      // Four statements under READ COMMITTED: each sees its own moment, as separate reads would.
      const [steps, events, waits, holds] = await Promise.all([
        rows(listing.lastStepsQuery(SQL, ids)),
        rows(listing.lastEventsQuery(SQL, ids)),
        rows(listing.openWaitsQuery(SQL, ids)),
        rows(listing.openHoldsQuery(SQL, ids)),
      ]);
      return listing.assembleActivity(ids, { steps, events, waits: waits.map(toWait), holds: holds.map(toHold) });
    },
    async completedStep(runId: string, stepId: string): Promise<StepRow | undefined> {
      const [r] = await pg.query(SQL.text(listing.COMPLETED_STEP), [runId, stepId]);
      return r ? toStep(r) : undefined;
    },
    async journal(runId: string): Promise<StepRow[]> {
      return (await pg.query(SQL.text(reads.JOURNAL), [runId])).map(toStep);
    },
    async waits(runId: string): Promise<WaitRow[]> {
      return (await pg.query(SQL.text(reads.WAITS_OF_RUN), [runId])).map(toWait);
    },
    async dueTimers(now: number, limit: number): Promise<WaitRow[]> {
      const rows = await pg.query(SQL.text(reads.DUE_TIMERS), [now, limit]);
      return rows.map(toWait);
    },
    async holds(filter: HoldFilter = {}): Promise<HoldRow[]> {
      const q = reads.holds(SQL, filter);
      return (await pg.query(q.sql, q.params)).map(toHold);
    },
    async events(filter: EventFilter = {}): Promise<EventRow[]> {
      // Hazard: sequence numbers are taken before commit, so under concurrent writers a later seq
      // can become visible before an earlier one, and a follower that moved past it skips that
      // event (one run's numbers do follow its commits: its writers hold its row lock until they
      // commit). A follower reads eventsAfter, whose position is a snapshot (event-stream.ts);
      // filtering by the snapshot horizon instead would hide every event while any transaction in
      // the cluster runs long.
      const q = reads.events(SQL, filter);
      return (await pg.query(q.sql, q.params)).map(toEvent);
    },
    async eventsAfter(position: string | null, filter: EventStreamFilter = {}): Promise<EventPage> {
      const { p, runIds, limit } = checkedStream(position, filter);
      const q = streamQuery(p, runIds, limit);
      return streamPage(position, p, await pg.query(q.sql, q.params), limit);
    },
    async listSessions(filter: SessionFilter = {}): Promise<SessionSummary[]> {
      const bySession = filter.sessionId !== undefined;
      const params: unknown[] = bySession ? [filter.sessionId, filter.limit ?? 1000] : [filter.limit ?? 1000];
      return (await pg.query(SQL.text(sessionsSql(bySession)), params)).map(toSession);
    },
  };
}
