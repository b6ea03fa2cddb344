import { SteadError } from "../errors.js";
import type { Redactor } from "../redaction/redactor.js";
import type { RunRetentionOptions } from "../engine/runs/retention.js";
import type { AnyDefinition } from "../engine/definitions/definition.js";
import type { ExecutionOutcome } from "../engine/execution/index.js";
import type { WorkspaceOptions } from "../engine/runs/workspace.js";
import type { RunStatus } from "../store/types.js";
import type { RestoreHook } from "./restore-gate.js";
import type { StorageReport } from "./storage-guard.js";

export interface WorkerOptions {
  /** The definitions this worker can execute; it claims only runs of these. */
  definitions: readonly AnyDefinition[];
  /** Runs executed at once. Default 10. */
  concurrency?: number;
  /** Lease length in ms. Default 30 000. A worker on another host takes over a silent worker's runs after this. */
  leaseMs?: number;
  /** Heartbeat period in ms. Default leaseMs / 3. */
  heartbeatMs?: number;
  /** Claim and sweep period in ms when idle. Default 200. */
  pollMs?: number;
  /** On stop(), how long running steps may take to finish before the worker gives up on them. Default 30 000. */
  graceMs?: number;
  /** Claim only these runs (see also `setRunIds`). */
  runIds?: readonly string[];
  /** Run the sweeper (timers, dead owners). Default true. */
  sweep?: boolean;
  payloadLimitBytes?: number;
  maxLostClaims?: number;
  /** How runs' workspaces are restored on resume and captured (see `stead.runs.start(..., { workspace })`). */
  workspace?: WorkspaceOptions;
  /**
   * Metadata of external layers (an image tag, a database snapshot id) recorded with every step
   * write: a flat string map, at most 4 KB as JSON. Not called when absent.
   */
  checkpointMetadata?: () => Record<string, string>;
  /** Applied to checkpoint metadata (as JSON text) before it is stored. Default: values of keys that look secret are replaced. */
  redact?: (text: string) => string;
  /**
   * Where `ctx.secret(name)` reads a secret (default: the environment). Each value read is added
   * to `redactor`, so it is redacted from everything stored from then on.
   */
  secretSource?: (name: string) => string | undefined;
  /**
   * Deletes runs finished at least `finishedBefore` ago, every `everyMs` (default hourly), as
   * `stead gc --finished-before` does: whole run trees and sessions, never one not finished.
   */
  retention?: RunRetentionOptions & { everyMs?: number };
  /** The instance's redactor (Stead passes its own): `ctx.secret` values join it. */
  redactor?: Redactor;
  /**
   * Run one by one before a resumed run is claimed (a run claimed before: after a crash, a wait,
   * a release). The first that throws or times out aborts that resume: nothing is claimed or written.
   */
  restoreHooks?: readonly RestoreHook[];
  /** Per restore hook. Default 10 000 ms. */
  restoreHookTimeoutMs?: number;
  /**
   * Announce the definitions this worker serves in the store (name, kind, fingerprint, input
   * schema), so they can be listed and started by name without their code: refreshed at the
   * heartbeat, alive for `leaseMs` (at least 10 s) after each refresh, withdrawn on a graceful stop. Default: true,
   * unless `runIds` restricts its claims (a foreground run's worker serves no one else).
   */
  announce?: boolean;
  /** After a write failed for lack of space: the room a probe must find before runs continue. Default 8 MiB. */
  storageHeadroomBytes?: number;
  /** How long the store may stay full before each affected run gets a `storage.full` event. Default 30 000 ms. */
  storageAlertMs?: number;
  /** How often a full store is probed for room. Default 1 000 ms. */
  storageProbeMs?: number;
}

export interface WorkerEvents {
  outcome: [runId: string, outcome: ExecutionOutcome];
  /** `previousStatus` "running": the run's last lease had expired (a takeover). */
  claimed: [runId: string, previousStatus: RunStatus];
  /** A unit of this run's writes (a step's outcome, an intent, a wait) is durable, `ms` after it was handed to the group commit. */
  committed: [runId: string, ms: number];
  error: [error: unknown];
  /** The store's room to write changed: full (claims pause), still full, recovered. */
  storage: [report: StorageReport];
  /** The worker stopped for good: its store is gone (deleted or replaced under it). */
  fatal: [error: unknown];
}

/** The definitions by name; two different ones of one name are refused. */
export function definitionsByName(definitions: readonly AnyDefinition[]): Map<string, AnyDefinition> {
  const byName = new Map<string, AnyDefinition>();
  for (const d of definitions) {
    const other = byName.get(d.name);
    if (other && other !== d) {
      throw new SteadError("STEAD_INVALID_DEFINITION", `two definitions are named "${d.name}"`, {
        fix: "give each workflow a unique name",
      });
    }
    byName.set(d.name, d);
  }
  return byName;
}
