/** Reads of runs, their journals, waits, holds, events and sessions. None of them writes. */
import type { EventFilter, EventPage, EventRow, EventStreamFilter, HoldFilter, ListedHold, ListedWait, RunActivity, RunFilter, RunPage, RunQuery, RunRow, SessionFilter, SessionSummary, StepRow, WaitRow } from "../records.js";

export interface RunReads {
  getRun(id: string): Promise<RunRow | undefined>;
  /**
   * One page of runs matching the query's filters, in its sort order (id breaking ties), and the
   * cursor of the next page. Keyset pagination on indexed columns: a page's cost follows its size,
   * not the store's (store/listing-cursor.ts; the indexes are listed in store/README.md). A malformed
   * filter, limit or cursor is refused (STEAD_BAD_OPTION, `details.field` naming it).
   */
  listRuns(query?: RunQuery): Promise<RunPage>;
  /** How many runs match `filter` (the filters of `listRuns`). Counts every match: its cost grows with them. */
  countRuns(filter?: RunFilter): Promise<number>;
  /**
   * For each of these runs that exists (at most MAX_PAGE_SIZE ids), its last journal entry's small
   * fields, its latest event's time, open waits and open holds: a few rows per run, never its journal.
   * Read only by listings: a wait or hold whose sealed values fail to open is listed marked `damaged`.
   */
  runActivity(runIds: readonly string[]): Promise<RunActivity[]>;
  /** The run's latest completed journal entry of step `stepId`, looked for from the journal's end. */
  completedStep(runId: string, stepId: string): Promise<StepRow | undefined>;
  journal(runId: string): Promise<StepRow[]>;
  waits(runId: string): Promise<WaitRow[]>;
  /**
   * Open waits with a wake time (kinds `timer` and `quota`) whose wake time is at or before `now`,
   * earliest first; one whose sealed values fail to open is marked `damaged`, not a failed read
   * (one changed row would keep every timer of the store asleep).
   */
  dueTimers(now: number, limit: number): Promise<ListedWait[]>;
  /** Holds the filter takes; with `markDamaged`, one whose sealed values fail to open is listed marked instead of failing the read. */
  holds(filter?: HoldFilter): Promise<ListedHold[]>;
  /** Events by number (see EventFilter's hazard: a follower reads `eventsAfter`). */
  events(filter?: EventFilter): Promise<EventRow[]>;
  /**
   * The event stream from `position` (null: from the start): every event committed since, that
   * the filter takes, each exactly once across reads, in an order consistent with commit order
   * (one run's in number order), never waiting on a transaction that has not committed. A page of
   * fewer than `limit` events ends at whole commits: its position continues any filter from there.
   * A position this store cannot have given is refused with STEAD_BAD_POSITION.
   */
  eventsAfter(position: string | null, filter?: EventStreamFilter): Promise<EventPage>;
  /** Sessions (runs grouped by `sessionId`), most recently updated first; one whose last turn's error fails to open is listed marked `damaged`. */
  listSessions(filter?: SessionFilter): Promise<SessionSummary[]>;
}
