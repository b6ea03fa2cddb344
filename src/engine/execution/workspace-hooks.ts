import type { ClaimedRun, EventWrite, StepKind } from "../../store/types.js";
import { RunWorkspace, type CaptureParts } from "../runs/workspace.js";
import type { ExecutionDeps } from "./deps.js";
import { workspaceGap } from "./hold-facts.js";
import type { HoldFacts, Lifecycle } from "./lifecycle.js";
import type { FencedWriter } from "./writer.js";

const NO_SETTLE = { stop: (): Promise<void> => Promise.resolve() };

/**
 * The run's workspace as one execution sees it: brought to the last completed step before any
 * user code runs, watched during each step that may change files, and captured in that step's own
 * write, so the snapshot and the journal position agree. Without a workspace every hook is a no-op.
 */
export class WorkspaceHooks {
  private ws: RunWorkspace | undefined;

  constructor(
    private readonly claimed: ClaimedRun,
    private readonly deps: ExecutionDeps,
    private readonly life: Lifecycle,
    private readonly writer: FencedWriter,
    private readonly hold: (h: HoldFacts) => void,
  ) {}

  /**
   * Restores the directory (a first claim records a `start` snapshot instead) and reports restore
   * hooks, in one write. False: the execution ended meanwhile or the run was held.
   */
  async open(): Promise<boolean> {
    const events: EventWrite[] = this.deps.resumed ? [{ type: "run.resumed", data: this.deps.resumed }] : [];
    let start: CaptureParts = RunWorkspace.none();
    const root = this.claimed.run.workspace;
    if (root) {
      try {
        const opened = await RunWorkspace.open(this.deps.store, this.claimed, root, this.deps.workspace ?? {});
        this.ws = opened.ws;
        if (this.life.finished) {
          opened.ws.close();
          return false;
        }
        events.push(...opened.events);
        if (opened.fresh) start = await opened.ws.capture(-1, null, "start", this.writer.checkpointText());
      } catch (e) {
        this.hold(workspaceGap(root, e));
        return false;
      }
    }
    events.push(...start.events);
    if (events.length === 0 && start.snapshots.length === 0) return true;
    await this.writer.write({ ...(start.snapshots.length ? { snapshots: start.snapshots } : {}), events });
    this.ws?.committed(start);
    return this.life.endable;
  }

  /**
   * Whether a step of `kind` is captured. Every step that may change files is (model calls change
   * none): a resume restores the last completed step's snapshot, which must hold what every step
   * before it wrote.
   */
  captures(kind: StepKind): boolean {
    return this.ws !== undefined && kind !== "model";
  }

  /** Settle captures while the step runs, each written under the lease. Stop it before the step's own capture. */
  watch(seq: number, stepId: string): { stop(): Promise<void> } {
    const ws = this.ws;
    if (!ws) return NO_SETTLE;
    return ws.settle(seq, stepId, async (parts) => {
      if (this.life.finished) return false;
      await this.writer.write({ ...(parts.snapshots.length ? { snapshots: parts.snapshots } : {}), events: parts.events });
      ws.committed(parts);
      return true;
    });
  }

  /** The files as the step left them, for its own write (nothing once the execution has ended). */
  capture(seq: number, stepId: string, checkpoint: string | null): Promise<CaptureParts> {
    const ws = this.ws;
    if (!ws || this.life.finished) return Promise.resolve(RunWorkspace.none());
    return ws.capture(seq, stepId, "step", checkpoint);
  }

  /** The capture's write committed: the tracker may take it as its new base. */
  committed(parts: CaptureParts): void {
    this.ws?.committed(parts);
  }

  close(): void {
    this.ws?.close();
  }
}
