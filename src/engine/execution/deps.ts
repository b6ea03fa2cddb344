import type { StreamRedaction } from "../../redaction/stream-redactor.js";
import type { Owner, RunReads, SnapshotsAndBlobs, StoreLifecycle, Unit, UnitResult } from "../../store/types.js";
import type { WorkspaceOptions } from "../runs/workspace.js";

/** What the worker gives each execution it starts. */
export interface ExecutionDeps {
  owner: Owner;
  /** Commits one unit, durably, possibly batched with other runs' units (group commit). */
  commit(unit: Unit): Promise<UnitResult>;
  payloadLimit: number;
  /** Lost claims in a row (no step completing) that put a run on hold `process_failed`. */
  maxLostClaims: number;
  /** Reads (a session turn's earlier turns), workspace snapshots and blobs; every run change goes through `commit`. */
  store: RunReads & SnapshotsAndBlobs & StoreLifecycle;
  workspace?: WorkspaceOptions;
  /** Checkpoint metadata for each step write, already encoded (≤ 4 KB, redacted); absent: nothing is evaluated. */
  checkpoint?: () => string | null;
  /** What the worker did before this claim (restore hooks and their durations), for the `run.resumed` event. */
  resumed?: Record<string, unknown>;
  /**
   * Whether this claim's lease is known to be valid now: `true` at once when the last renewal is
   * recent, else a promise of a renewal made now (false: the lease is gone and the execution was
   * ended). Asked right before every step function, intent and reconcile (see `leaseHeld`).
   */
  checkLease?: () => true | Promise<boolean>;
  /** `ctx.secret`: reads a secret at each use and has it redacted from everything stored from then on. */
  secret?: (name: string) => string;
  /** A new redaction of one stream of live text (a model call's), before any of it is written: see stream-redactor.ts. */
  redactStream?: () => StreamRedaction;
}
