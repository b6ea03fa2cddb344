/** `stead.runs`: a run's start, reads and control verbs. */
import type { AnyDefinition, WorkflowDefinition } from "../../engine/definitions/definition.js";
import type * as verbs from "../../engine/control/index.js";
import type { ControlOptions } from "../../engine/control/options.js";
import type { Replayable } from "../../engine/control/idempotency.js";
import type * as listing from "../../engine/runs/listing.js";
import type { RunRetentionOptions, RunRetentionSummary } from "../../engine/runs/retention.js";
import type { Explanation } from "../../engine/runs/why.js";
import { waitView, type EventStreamPage, type EventView, type HoldView, type RunInfo, type StepView, type WaitView } from "../../engine/runs/views.js";
import { requireRun } from "../../engine/control/common.js";
import type { EraseOptions, Erased, FollowOptions, StartOptions } from "../verb-options.js";
import type { StoreHost } from "./bind.js";

export interface SteadRuns {
  /** Records a new run of `definition`; any worker that has the definition executes it. */
  start<I, O>(definition: WorkflowDefinition<I, O>, input: I, options?: StartOptions): Promise<Replayable<{ id: string }>>;
  /**
   * Records a new run of the definition named `name`, with no user code loaded: the input is
   * checked against the JSON Schema its workers announced. A name no worker ever announced is
   * refused; one no live worker serves now is started, and waits (`served: false`).
   */
  startByName(name: string, input: unknown, options?: StartOptions): Promise<Replayable<verbs.StartByNameResult>>;
  get(runId: string): Promise<RunInfo>;
  /** One page of runs and the cursor of the next (see engine/runs/listing.ts). Reads no journal. */
  list(query?: listing.RunListQuery): Promise<listing.RunListPage>;
  /** How many runs match `filter` (the filters of `list`); counts every match, so its cost grows with them. */
  count(filter?: listing.RunListFilter): Promise<number>;
  /** What a listing shows of each of these runs (a page's ids): last step, last event, open waits and holds. */
  activity(runIds: readonly string[]): Promise<listing.RunActivityView[]>;
  journal(runId: string): Promise<StepView[]>;
  /**
   * A page of a run's journal in journal order, and how many entries it has. `step`: the page (of
   * `limit` entries, at an offset that is a multiple of it) that holds that step, so a link to one
   * step finds its page; it takes no `offset`. Hazard: the store reads the whole journal and the
   * page is cut from it, so a page costs the journal's size; only the page leaves this process.
   */
  journalPage(runId: string, page?: { offset?: number; limit?: number; step?: string }): Promise<{ steps: StepView[]; total: number; offset: number }>;
  /** One run's waits, open and closed (open waits across runs: `stead.waits.list`). */
  waits(runId: string): Promise<WaitView[]>;
  /**
   * Events by number. Hazard: on Postgres, paging by `afterSeq` across runs can skip an event whose
   * number was taken before a later one's but committed after it; follow with `eventsAfter`.
   */
  events(filter?: { runId?: string; afterSeq?: number; limit?: number }): Promise<EventView[]>;
  /**
   * The event stream from `position` (absent or null: from the start), of one run (`runId`),
   * several (`runIds`) or the whole store: every event committed since, once each across reads,
   * in commit order, never held back by a transaction still open. Read again from the returned
   * position. A position this store did not give is refused with STEAD_BAD_POSITION.
   */
  eventsAfter(position?: string | null, filter?: { runId?: string; runIds?: readonly string[]; limit?: number }): Promise<EventStreamPage>;
  /** Approves what a run waits for. The same decision again succeeds (`already`); another is refused naming the first. */
  approve(runId: string, name: string, d?: verbs.Decision & ControlOptions): Promise<Replayable<verbs.DecisionResult>>;
  deny(runId: string, name: string, d?: verbs.Decision & ControlOptions): Promise<Replayable<verbs.DecisionResult>>;
  /** Delivers a signal a run waits for; `options` may be just who sends it. The same payload again succeeds (`already`). */
  signal(runId: string, name: string, payload: unknown, options?: ControlOptions | string | null): Promise<Replayable<verbs.SignalResult>>;
  pause(runId: string, options?: ControlOptions): Promise<Replayable<verbs.PauseResult>>;
  /**
   * Resumes a paused run, or a cancelled one from its last completed step (with the children its
   * cancellation ended); with `acceptChange`, releases a `definition_changed` hold by accepting the new code.
   */
  resume(runId: string, options?: { acceptChange?: boolean } & ControlOptions): Promise<Replayable<verbs.ResumeResult>>;
  /** Gives a failed run's failed step a new attempt (after fixing its cause), with nothing before it run again. */
  retry(runId: string, options?: ControlOptions): Promise<Replayable<verbs.RetryResult>>;
  cancel(runId: string, options?: { reason?: string } & ControlOptions): Promise<Replayable<verbs.CancelResult>>;
  release(runId: string, hold: string | undefined, options: verbs.ReleaseOptions & ControlOptions): Promise<Replayable<HoldView>>;
  fork(runId: string, options?: { at?: string; id?: string } & ControlOptions): Promise<Replayable<verbs.ForkResult>>;
  why(runId: string): Promise<Explanation>;
  /** Executes an existing run (and its children) in this process until it ends or parks. */
  follow(runId: string, definitions: readonly AnyDefinition[], options?: FollowOptions): Promise<RunInfo>;
  /** Polls until `until(run)` holds (default: the run ended), or throws STEAD_TIMEOUT. */
  waitFor(runId: string, options?: { until?: (run: RunInfo) => boolean; timeoutMs?: number; pollMs?: number }): Promise<RunInfo>;
  /**
   * Deletes runs finished at least `finishedBefore` ago (journal, events, waits, holds, snapshots,
   * the run rows unless `keepSummary`), a whole run tree and a whole session at a time, then the
   * workspace blobs nothing refers to any more. A run not finished, or a tree or session with one,
   * is never touched. On SQLite, `erase` then says whether the deleted rows' bytes are gone from
   * the store's files, or which files still hold them and why (see {@link EraseOptions}).
   */
  deleteFinished(options: RunRetentionOptions & EraseOptions): Promise<RunRetentionSummary & Erased>;
}

/** The verbs whose bodies are the instance's flat methods, and those methods' names. */
export type RunsBodies = Omit<SteadRuns, "waits">;
export const RUNS_VERBS = {
  start: "start",
  startByName: "startByName",
  get: "get",
  list: "list",
  count: "count",
  activity: "activity",
  journal: "journal",
  journalPage: "journalPage",
  events: "events",
  eventsAfter: "eventsAfter",
  approve: "approve",
  deny: "deny",
  signal: "signal",
  pause: "pause",
  resume: "resume",
  retry: "retry",
  cancel: "cancel",
  release: "release",
  fork: "fork",
  why: "why",
  follow: "follow",
  waitFor: "waitFor",
  deleteFinished: "deleteFinishedRuns",
} as const;

export function steadRuns(host: StoreHost, bodies: RunsBodies): SteadRuns {
  return Object.freeze({
    ...bodies,
    async waits(runId: string): Promise<WaitView[]> {
      await host.ready();
      await requireRun(host.store, runId);
      return (await host.store.waits(runId)).map(waitView);
    },
  });
}
