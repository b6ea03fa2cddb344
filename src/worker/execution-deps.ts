import { performance } from "node:perf_hooks";
import { crashPoint, crashPointArmed } from "../engine/crash-points.js";
import type { AnyDefinition } from "../engine/definitions/definition.js";
import { readSecret } from "../engine/execution/secrets.js";
import { Execution } from "../engine/execution/index.js";
import { DEFAULT_PAYLOAD_LIMIT } from "../engine/payload.js";
import { redactTokens } from "../redaction/redact.js";
import { StreamRedactor, UNREDACTED_STREAM } from "../redaction/stream-redactor.js";
import type { ClaimedRun, Owner, Store, Unit } from "../store/types.js";
import { encodeCheckpoint } from "../workspace/checkpoint.js";
import { GroupCommitter } from "./group-commit.js";
import type { HookReport } from "./restore-gate.js";
import type { WorkerOptions } from "./worker-options.js";

export type ExecutionOptions = Pick<WorkerOptions, "payloadLimitBytes" | "maxLostClaims" | "workspace" | "checkpointMetadata" | "redact" | "secretSource" | "redactor">;

export interface ExecutionWiring {
  /** A unit of a run's writes is durable, `ms` after it was handed to the group commit. */
  committed: (runId: string, ms: number) => void;
  /** A commit failed (the worker reacts to a full or lost store); the execution sees the error too. */
  commitFailed: (e: unknown) => void;
  /** ExecutionDeps.checkLease, asked of the worker's lease keeping. */
  checkLease: (exec: Execution) => true | Promise<boolean>;
}

/**
 * What a worker gives each execution it starts (ExecutionDeps): its writes through the worker's
 * group commit, checkpoint metadata, `ctx.secret`, stream redaction, the lease check.
 */
export class Executions {
  private readonly committer: GroupCommitter;

  constructor(
    private readonly store: Store,
    private readonly options: ExecutionOptions,
    private readonly wiring: ExecutionWiring,
  ) {
    this.committer = new GroupCommitter(store, {
      maxBatch: store.maxUnitsPerCommit ?? 500,
      inFlight: store.commitsInFlight ?? 1,
      // Only when armed: a store that must host a hook between its write and its COMMIT (Postgres)
      // needs a second round trip per commit for it.
      ...(crashPointArmed("mid-group-commit")
        ? { beforeCommit: (units: Unit[]) => crashPoint("mid-group-commit", units.flatMap((u) => u.flatMap((m) => m.steps?.map((s) => s.stepId) ?? []))) }
        : {}),
    });
  }

  get commitStats(): { transactions: number; units: number } {
    return this.committer.stats;
  }

  private readonly secret = (name: string): string => {
    const value = readSecret(name, this.options.secretSource ?? ((n) => process.env[n]));
    this.options.redactor?.add(`secret:${name}`, value, `ctx.secret("${name}")`);
    return value;
  };

  /** The execution of a claimed run; `hooks`: its restore hooks' durations when it resumes. */
  create(claimed: ClaimedRun, def: AnyDefinition, owner: Owner, hooks: HookReport | undefined): Execution {
    const meta = this.options.checkpointMetadata;
    const redact = this.options.redact ?? redactSecrets;
    const exec: Execution = new Execution(claimed, def, {
      owner,
      commit: (unit) => {
        const sent = performance.now();
        return this.committer.commit(unit).then(
          (r) => {
            this.wiring.committed(claimed.run.id, performance.now() - sent);
            return r;
          },
          (e: unknown) => {
            this.wiring.commitFailed(e);
            throw e;
          },
        );
      },
      payloadLimit: this.options.payloadLimitBytes ?? DEFAULT_PAYLOAD_LIMIT,
      maxLostClaims: this.options.maxLostClaims ?? 3,
      store: this.store,
      ...(this.options.workspace ? { workspace: this.options.workspace } : {}),
      ...(meta ? { checkpoint: () => encodeCheckpoint(meta(), redact, claimed.run.id) } : {}),
      ...(hooks ? { resumed: { hooks } } : {}),
      checkLease: (): true | Promise<boolean> => this.wiring.checkLease(exec),
      secret: this.secret,
      // Not only while the redactor is active: a ctx.secret read while the call streams joins it.
      redactStream: () => (this.options.redactor ? new StreamRedactor(this.options.redactor) : UNREDACTED_STREAM),
    });
    return exec;
  }
}

const SECRET_KEY = /secret|token|password|passwd|api[-_]?key|credential|private/i;

/**
 * The default redaction of checkpoint metadata: values of keys that look secret never reach the
 * store, nor does an access token under any key.
 */
export function redactSecrets(text: string): string {
  const meta = JSON.parse(text) as Record<string, string>;
  return JSON.stringify(Object.fromEntries(Object.entries(meta).map(([k, v]) => [redactTokens(k), SECRET_KEY.test(k) ? "[redacted]" : redactTokens(v)])));
}
