import type { WorkerOptions } from "../worker/worker.js";
import type { StorageReport } from "../worker/storage-guard.js";
import type { AnyDefinition } from "../engine/definitions/definition.js";
import type { ControlOptions } from "../engine/control/options.js";
import type { EventView } from "../engine/runs/views.js";
import type { EraseReport } from "../store/types.js";

/** Options of an instance's verbs, apart from the instance (stead.ts) so its namespaces (namespaces/) can name them. */

/** How long a manual gc waits for readers of the store before it reports its erase unfinished. */
export const DEFAULT_ERASE_WAIT_MS = 5_000;

export interface EraseOptions {
  /**
   * SQLite: how long to keep trying the checkpoint that erases the deleted rows' bytes from the
   * store file and its -wal while another connection reads from before the deletes. Default 5 s.
   * One still unfinished then is recorded in the store: a worker's sweeper finishes it once the
   * reader is done, and so does the next gc.
   */
  eraseWaitMs?: number;
}

export interface Erased {
  /** SQLite only: whether the deleted rows' bytes are gone from the store's files (absent on Postgres, whose files keep them until its VACUUM). */
  erase?: EraseReport;
}

export interface StartOptions extends ControlOptions {
  /** Run id; default a fresh one. */
  id?: string;
  /**
   * A directory the run works in: snapshotted after every effect and tool step, and brought back
   * to its last completed step when the run resumes, on this machine or another.
   */
  workspace?: string;
}

export interface FollowOptions extends Omit<WorkerOptions, "definitions" | "runIds"> {
  /** Extra definitions (e.g. of child runs) the in-process worker may execute. */
  definitions?: readonly AnyDefinition[];
  /** Keep executing through timers due within this many ms. Default 60 000. */
  followTimersMs?: number;
  /** Called for every new event of the run's tree, once each, in commit order. */
  onEvent?: (e: EventView) => void | Promise<void>;
  /** Report only events after this event stream position (a `position` of `eventsAfter`). Default: every event. */
  eventsFrom?: string;
  /**
   * Stops following when aborted: the in-process worker stops gracefully (steps in flight may
   * commit, then each run is handed back as pending for any worker) and follow returns the run.
   */
  signal?: AbortSignal;
  /** Called with errors of the in-process worker (it keeps polling after them). */
  onError?: (e: unknown) => void;
  /** Called when the in-process worker finds the store full, still full, or writable again. */
  onStorage?: (report: StorageReport) => void;
}
