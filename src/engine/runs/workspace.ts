import { isAbsolute, relative, resolve, sep } from "node:path";
import { errorMessage } from "../../errors.js";
import { existsSync, readdirSync } from "node:fs";
import type { ClaimedRun, EventWrite, RunReads, SnapshotsAndBlobs, SnapshotWrite, StoreLifecycle } from "../../store/types.js";
import { sessionTurns } from "../../store/run-sets.js";
import type { CaptureResult, RestoreModeOptions, ScanOptions, SettleOptions, WorkspacePolicy, WorkspaceTracker } from "../../workspace/index.js";
import { workspace, type Workspace } from "../../workspace/lazy.js";

/** How a worker treats the workspaces of the runs it executes. */
export interface WorkspaceOptions {
  /**
   * Same machine, files changed after the last completed step: "restore" (default) puts them back
   * as they were at that step (listed in a `workspace.restored` event); "keep" leaves them.
   */
  policy?: WorkspacePolicy;
  /** What a capture looks at (extra excludes, .gitignore, per-file size ceiling). */
  scan?: ScanOptions;
  /** Captures during a long step once the files are quiet; false turns them off. */
  settle?: SettleOptions | false;
  /**
   * Retention, applied by the worker's sweeper every `everyMs` (default one hour): snapshots of
   * finished runs older than their last `keepSteps` step snapshots are pruned, and blobs no snapshot
   * refers to are deleted (those younger than `graceMs`, default one hour, survive). Absent: keep every snapshot.
   */
  retention?: { keepSteps: number; everyMs?: number; graceMs?: number };
  /**
   * Put files back with the setuid and setgid bits their snapshot records. Default false: a
   * restore clears them (a snapshot can be edited; restored by root, such a file runs as root).
   */
  keepSpecialBits?: boolean;
}

/** Parts a capture adds to the step write it belongs to. */
export interface CaptureParts {
  snapshots: SnapshotWrite[];
  events: EventWrite[];
  result: CaptureResult | undefined;
}

const NONE: CaptureParts = { snapshots: [], events: [], result: undefined };

/**
 * A run's workspace inside one execution: brought to the last completed step's snapshot before
 * the run continues, captured after every effect and tool step (in that step's own write, so the
 * journal position and the snapshot agree), and during long steps once its files settle.
 * A capture that cannot look records a gap; it never fails the run.
 */
export class RunWorkspace {
  private constructor(
    readonly tracker: WorkspaceTracker,
    private readonly options: WorkspaceOptions,
    private readonly w: Workspace,
  ) {}

  /** Restores (or checks) the directory; returns the workspace and the events its claim reports. Throws when it cannot. */
  static async open(store: RunReads & SnapshotsAndBlobs & StoreLifecycle, claimed: ClaimedRun, root: string, options: WorkspaceOptions): Promise<{ ws: RunWorkspace; events: EventWrite[]; fresh: boolean }> {
    const scan = { ...(options.scan ?? {}), exclude: [...(options.scan?.exclude ?? []), ...storeFilesInside(store, root)] };
    const w = await workspace();
    const modes = { keepSpecialBits: options.keepSpecialBits ?? false };
    const inherited = await inheritTurnFiles(w, store, claimed, root, modes);
    const p = await w.prepareWorkspace({
      store,
      runId: claimed.run.id,
      root,
      journal: claimed.journal,
      ...(options.policy ? { policy: options.policy } : {}),
      options: scan,
      modes,
    });
    p.tracker.watch();
    return { ws: new RunWorkspace(p.tracker, options, w), events: [...inherited, ...p.events], fresh: p.action === "none" };
  }

  async capture(seq: number, stepId: string | null, source: "start" | "step", checkpoint: string | null): Promise<CaptureParts> {
    const r = await this.tracker.capture({ seq, stepId, source }, { checkpoint });
    return r.ok ? { snapshots: [r.snapshot], events: r.events, result: r } : { snapshots: [], events: r.events, result: r };
  }

  committed(parts: CaptureParts): void {
    if (parts.result) this.tracker.committed(parts.result);
  }

  /** Settle captures while a step runs; `commit` writes one under the lease. Stop it before the step's own capture. */
  settle(seq: number, stepId: string, commit: (parts: CaptureParts) => Promise<boolean>): { stop(): Promise<void> } {
    if (this.options.settle === false) return { stop: () => Promise.resolve() };
    return this.w.watchSettle({
      tracker: this.tracker,
      seq,
      stepId,
      ...(this.options.settle ?? {}),
      commit: (r) => commit(r.ok ? { snapshots: [r.snapshot], events: r.events, result: r } : { snapshots: [], events: r.events, result: r }),
      onError: (e) => process.emitWarning(`stead: settle capture of step "${stepId}" failed: ${errorMessage(e)}`),
    });
  }

  close(): void {
    this.tracker.close();
  }

  static none(): CaptureParts {
    return NONE;
  }
}

/** An SQLite store file inside the workspace is never captured (nor put back): it is the journal itself. */
function storeFilesInside(store: RunReads & SnapshotsAndBlobs & StoreLifecycle, root: string): string[] {
  if (store.dialect !== "sqlite") return [];
  const rel = relative(root, resolve(store.location));
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return [];
  const base = "/" + rel.split(sep).join("/");
  return [base, `${base}-wal`, `${base}-shm`, `${base}-journal`];
}

/**
 * A session turn starts where the turn before it left the files: on a machine where the
 * directory is missing or empty, a turn with no snapshot of its own gets the latest one of the
 * closest earlier turn that has any. Returns the event that says so.
 */
async function inheritTurnFiles(w: Workspace, store: RunReads & SnapshotsAndBlobs & StoreLifecycle, claimed: ClaimedRun, root: string, modes: RestoreModeOptions): Promise<EventWrite[]> {
  const { sessionId, turn, id } = claimed.run;
  if (!sessionId || turn === null) return [];
  if (existsSync(root) && readdirSync(root).length > 0) return [];
  if ((await store.snapshots(id)).length > 0) return [];
  const earlier = (await sessionTurns(store, sessionId)).filter((r) => r.turn !== null && r.turn < turn).reverse();
  for (const r of earlier) {
    const snapshot = w.resumeSnapshot(await store.snapshots(r.id), await store.journal(r.id));
    if (!snapshot) continue;
    await w.restoreSnapshot(store, snapshot, root, undefined, modes);
    return [{ type: "workspace.restored", data: { action: "inherited", fromRun: r.id, fromTurn: r.turn, seq: snapshot.seq, step: snapshot.stepId, workspace: root } }];
  }
  return [];
}
