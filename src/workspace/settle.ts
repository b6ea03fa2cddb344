/**
 * Settle-based capture during a long step: after the workspace has been quiet for `quietMs`, or
 * at the latest `maxWaitMs` after the first unsaved change while changes continue, capture a
 * `settle` snapshot and hand it to `commit` (the engine writes it under the run's lease).
 *
 * Listens to the tracker's change watcher (started here if it was not): a missed event only
 * delays a settle snapshot; the step's own snapshot at its end is a capture like any other.
 *
 * Stop the watch (and await it) before capturing the step's own snapshot, so no settle snapshot
 * of the step is committed after the step's own (the tracker runs captures one at a time anyway).
 */
import type { CaptureResult, WorkspaceTracker } from "./capture.js";

export interface SettleOptions {
  /** Quiet period before a capture. Default 2 000 ms. */
  quietMs?: number;
  /** Longest wait from the first unsaved change while changes continue. Default 30 000 ms. */
  maxWaitMs?: number;
}

export interface SettleWatchInput extends SettleOptions {
  tracker: WorkspaceTracker;
  /** The step in progress. */
  seq: number;
  stepId: string;
  /**
   * Commits a capture (its snapshot and events under the lease); resolves true if it committed.
   * Called for every failed capture (its gap event) and every capture that found a change.
   */
  commit: (result: CaptureResult) => Promise<boolean>;
  /** A commit or capture that threw (the watch goes on). */
  onError?: (e: unknown) => void;
}

export interface SettleWatch {
  /** Ends the watch; resolves once a capture in progress (and its commit) has finished. */
  stop(): Promise<void>;
  /** Captures committed so far. */
  readonly committed: number;
}

export function watchSettle(input: SettleWatchInput): SettleWatch {
  const quietMs = input.quietMs ?? 2_000;
  const maxWaitMs = input.maxWaitMs ?? 30_000;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let firstDirty: number | undefined;
  let lastEvent = 0;
  let running: Promise<void> | undefined;
  let committed = 0;

  const schedule = () => {
    if (stopped || firstDirty === undefined) return;
    clearTimeout(timer);
    const due = Math.min(lastEvent + quietMs, firstDirty + maxWaitMs);
    timer = setTimeout(fire, Math.max(0, due - Date.now()));
  };

  const fire = () => {
    if (stopped || running) return;
    firstDirty = undefined;
    running = (async () => {
      try {
        const result = await input.tracker.capture({ seq: input.seq, stepId: input.stepId, source: "settle" });
        if (result.ok && result.snapshot.filesChanged === 0) return;
        if (await input.commit(result)) {
          committed++;
          input.tracker.committed(result);
        }
      } catch (e) {
        input.onError?.(e);
      } finally {
        running = undefined;
        // Changes during the capture wait for their own quiet period.
        schedule();
      }
    })();
  };

  const watcher = input.tracker.watch();
  const unsubscribe = watcher?.onChange(() => {
    lastEvent = Date.now();
    firstDirty ??= lastEvent;
    schedule();
  });

  return {
    get committed() {
      return committed;
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      unsubscribe?.();
      await running;
    },
  };
}
