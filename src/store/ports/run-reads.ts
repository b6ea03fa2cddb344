/** Reads of runs, their journals, waits, holds, events and sessions. None of them writes. */
import type { EventFilter, EventRow, HoldFilter, HoldRow, RunFilter, RunRow, SessionFilter, SessionSummary, StepRow, WaitRow } from "../records.js";

export interface RunReads {
  getRun(id: string): Promise<RunRow | undefined>;
  listRuns(filter?: RunFilter): Promise<RunRow[]>;
  /** How many runs match `filter` (the same filters as `listRuns`, without a limit). */
  countRuns(filter?: Omit<RunFilter, "limit">): Promise<number>;
  journal(runId: string): Promise<StepRow[]>;
  waits(runId: string): Promise<WaitRow[]>;
  /** Open waits with a wake time (kinds `timer` and `quota`) whose wake time is at or before `now`, earliest first. */
  dueTimers(now: number, limit: number): Promise<WaitRow[]>;
  holds(filter?: HoldFilter): Promise<HoldRow[]>;
  events(filter?: EventFilter): Promise<EventRow[]>;
  /** Sessions (runs grouped by `sessionId`), most recently updated first. */
  listSessions(filter?: SessionFilter): Promise<SessionSummary[]>;
}
