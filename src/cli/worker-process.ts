/**
 * A worker as the CLI runs one, for `stead worker` and `stead serve --worker`: its options from the
 * command line, its definitions loaded from files (load.ts, the one loader), and what it prints.
 */
import { SteadError } from "../errors.js";
import { Option, type Command } from "commander";
import type { AnyDefinition } from "../engine/definitions/definition.js";
import type { Stead } from "../stead/stead.js";
import type { ExecutionOutcome } from "../engine/execution/index.js";
import type { Worker } from "../worker/worker.js";
import type { WorkspacePolicy } from "../workspace/restore.js";
import { retentionAge } from "../engine/runs/retention.js";
import { parseDuration } from "../engine/durations.js";
import { parsePositiveInt, print } from "./context.js";
import { clock, describeStorage } from "./format.js";
import { loadFiles } from "./load.js";
import { writeErr } from "./report-error.js";

export interface WorkerCliOptions {
  concurrency?: string;
  lease?: string;
  poll?: string;
  workspacePolicy?: string;
  keepSpecialBits?: boolean;
  deleteFinishedBefore?: string;
  keepSummary?: boolean;
}

export function workspacePolicyOption(): Option {
  return new Option("--workspace-policy <policy>", "on resume, files changed after the last completed step: put back (restore) or keep").choices(["restore", "keep"]);
}

/** The options a worker takes on the command line (`stead worker`, `stead serve --worker`). */
export function withWorkerOptions(cmd: Command): Command {
  return cmd
    .option("--concurrency <n>", "runs executed at once", "10")
    .option("--lease <ms>", "lease length (ms or a duration like 30s)", "30s")
    .option("--poll <ms>", "claim and sweep period when idle (ms or a duration); wake-ups claim sooner", "200")
    .option("--delete-finished-before <duration>", "hourly, delete runs finished at least this long ago (as `stead gc --finished-before`)")
    .option("--keep-summary", "with --delete-finished-before: keep each run's row and a run.pruned event")
    .addOption(workspacePolicyOption())
    .option("--keep-special-bits", "on resume, put files back with the setuid and setgid bits their snapshot records (default: cleared)");
}

export interface CliWorker {
  worker: Worker;
  names: string[];
  concurrency: number;
}

/** The definitions the files export (load.ts, as `stead worker` loads them), before any store is opened. */
export const workerDefinitions = (files: readonly string[]): Promise<AnyDefinition[]> => loadFiles(files);

/** Makes a worker for `definitions` on `stead`, printing its claims and outcomes to stdout and its errors to stderr. */
export function cliWorker(stead: Stead, definitions: readonly AnyDefinition[], o: WorkerCliOptions): CliWorker {
  const { concurrency, leaseMs, pollMs, retention } = checkWorkerOptions(o);
  const workspace = { ...(o.workspacePolicy ? { policy: o.workspacePolicy as WorkspacePolicy } : {}), ...(o.keepSpecialBits ? { keepSpecialBits: true } : {}) };
  const w = stead.worker({ definitions, concurrency, leaseMs, pollMs, ...(retention ? { retention } : {}), ...(Object.keys(workspace).length > 0 ? { workspace } : {}) });
  w.on("claimed", (id) => print(`${clock(Date.now())}  claimed ${id}`));
  w.on("outcome", (id, outcome) => print(`${clock(Date.now())}  ${id} ${describeOutcome(outcome)}`));
  w.on("error", (e) => writeErr(`stead: worker error: ${e instanceof Error ? e.message : String(e)}`));
  w.on("storage", (r) => writeErr(`stead: ${describeStorage(r)}`));
  return { worker: w, names: definitions.map((d) => d.name), concurrency };
}

/** The numeric options, checked: call it before a store is opened or a file loaded, so a typo costs nothing. */
export function checkWorkerOptions(o: WorkerCliOptions): { concurrency: number; leaseMs: number; pollMs: number; retention?: { finishedBefore: number; keepSummary: boolean } } {
  if (o.keepSummary && o.deleteFinishedBefore === undefined) {
    throw new SteadError("STEAD_BAD_OPTION", "--keep-summary goes with --delete-finished-before", { fix: "stead worker <files> --delete-finished-before 30d --keep-summary" });
  }
  return {
    concurrency: parsePositiveInt(o.concurrency ?? "10", "--concurrency"),
    leaseMs: parseDuration(o.lease ?? "30s", "--lease"),
    pollMs: parseDuration(o.poll ?? "200", "--poll"),
    ...(o.deleteFinishedBefore === undefined ? {} : { retention: { finishedBefore: retentionAge(o.deleteFinishedBefore, "--delete-finished-before"), keepSummary: o.keepSummary ?? false } }),
  };
}

function describeOutcome(o: ExecutionOutcome): string {
  switch (o.kind) {
    case "failed":
      return `failed: ${o.error}`;
    case "waiting":
      return `waiting for ${o.wait}`;
    case "held":
      return `held (${o.hold}): ${o.reason}`;
    case "aborted":
      return `aborted${o.error ? `: ${o.error}` : ""}`;
    case "storage":
      return `handed back: ${o.error}`;
    default:
      return o.kind;
  }
}
