import type { Command } from "commander";
import { checkWorkspace } from "../../workspace/workspace-path.js";
import type { WorkspacePolicy } from "../../workspace/restore.js";
import { formatDuration, parseDuration } from "../../engine/durations.js";
import { checkChosenRunId } from "../../engine/ids.js";
import { DEFAULT_PAYLOAD_LIMIT, encodePayload } from "../../engine/payload.js";
import type { Worker } from "../../worker/worker.js";
import { SteadError } from "../../errors.js";
import { act, defaultBy, example, print, readJsonInput, shellQuote, storeOption, withStead } from "../context.js";
import { EXIT } from "../exit-codes.js";
import { followForeground, onInterrupt } from "../follow.js";
import { reportError, writeErr } from "../report-error.js";
import { loadFile, pickWorkflow } from "../load.js";
import { checkWorkerOptions, cliWorker, withWorkerOptions, workerDefinitions, workspacePolicyOption, type WorkerCliOptions } from "../worker-process.js";
import { parseListen } from "../listen-address.js";
import { clock } from "../format.js";
import { backupSchedule, ScheduledBackups, type BackupScheduleOptions } from "../scheduled-backups.js";

interface RunOptions {
  idempotencyKey?: string;
  by?: string;
  input?: string;
  inputFile?: string;
  detach?: boolean;
  workflow?: string;
  id?: string;
  workspace?: string;
  workspacePolicy?: string;
}

interface WorkerCommandOptions extends WorkerCliOptions, BackupScheduleOptions {
  connectTimeout?: string;
  metrics?: string;
}

/** The worker's metrics on a port of their own. */
async function serveWorkerMetrics(w: Worker, at: { host: string; port: number }) {
  const [{ Metrics }, { serveMetrics }] = await Promise.all([import("../../server/metrics.js"), import("../../server/metrics-server.js")]);
  const metrics = new Metrics();
  metrics.observeWorker(w);
  return serveMetrics(metrics, { ...at, logError: (line) => writeErr(`stead worker: ${line}`) });
}

export function registerRun(program: Command): void {
  const run = program
    .command("run")
    .description("start a run of a workflow file and execute it here until it ends or parks")
    .argument("<file>", "a .ts or .js file exporting workflows (no build step needed)")
    .option("--input <json>", "the run's input, as JSON (- reads it from standard input)")
    .option("--input-file <path>", "read the run's input, as JSON, from this file")
    .option("--workflow <name>", "which workflow, when the file exports several")
    .option("--id <runId>", "the run's id, without '.' (kept for child runs); default: a fresh one")
    .option("--workspace <dir>", "a directory the run works in: snapshotted after each effect/tool step, restored when the run resumes")
    .addOption(workspacePolicyOption())
    .option("--idempotency-key <key>", "start at most one run for this key: a repeat follows the run the first call started")
    .option("--by <who>", "who starts it (default $USER@host)")
    .option("--detach", "only start the run (pending) and print its id; a worker executes it")
    .action(
      act(async (file: string, o: RunOptions, cmd: Command) => {
        if (o.detach && o.workspacePolicy !== undefined) {
          throw new SteadError("STEAD_BAD_OPTION", "--workspace-policy applies to the process that executes the run, and --detach executes nothing here", {
            fix: "pass it to `stead worker` instead",
          });
        }
        if (o.id !== undefined) checkChosenRunId(o.id);
        // Input first: a bad --input must be refused before anything is loaded or written.
        const input: unknown = (await readJsonInput(o)) ?? null;
        const workspace = o.workspace === undefined ? undefined : checkWorkspace(o.workspace);
        const loaded = await loadFile(file);
        const definition = pickWorkflow(loaded, file, o.workflow);
        // start() checks the size again; checked here too so an input over the ceiling creates no store.
        encodePayload(input, `the input of ${definition.name}`, DEFAULT_PAYLOAD_LIMIT);
        return withStead(cmd, true, async (stead) => {
          const { id, already } = await stead.runs.start(definition, input, {
            ...(o.id === undefined ? {} : { id: o.id }),
            ...(workspace ? { workspace } : {}),
            ...(o.idempotencyKey === undefined ? {} : { idempotencyKey: o.idempotencyKey }),
            by: o.by ?? defaultBy(),
          });
          const started = already ? `run ${id} was already started with this key` : `run ${id} started (${definition.name})${workspace ? `, workspace ${workspace}` : ""}`;
          if (o.detach) {
            const store = storeOption(cmd);
            print(`${started}, not executed here; it is ${already ? (await stead.runs.get(id)).status : "pending"}`);
            print(`run it with: stead worker ${shellQuote(file)}${store === undefined ? "" : ` --store ${shellQuote(store)}`}`);
            return EXIT.ok;
          }
          print(already ? `${started}; following it` : started);
          return followForeground(stead, id, loaded.definitions, o.workspacePolicy ? { workspace: { policy: o.workspacePolicy as WorkspacePolicy } } : {});
        });
      }),
    );
  example(
    run,
    `stead run ./triage.ts --input '{"issue": 42}'`,
    "stead run ./flows.ts --workflow nightly --id nightly-2024-06-01",
    "stead run ./triage.ts --input-file issue.json --detach",
    "curl -s https://example.com/issue.json | stead run ./triage.ts --input -",
  );

  const worker = withWorkerOptions(
    program
      .command("worker")
      .description("claim and execute runs of the workflows in these files until SIGINT/SIGTERM")
      .argument("<files...>", ".ts or .js files exporting workflows"),
  )
    .option("--connect-timeout <duration>", "give up (exit 7) if the store cannot be reached for this long at start (default: keep trying)")
    .option("--metrics <[host:]port>", "serve this worker's Prometheus metrics at http://host:port/metrics (host default 127.0.0.1; no tokens)")
    .option("--backup-dir <dir>", "also take backups of the (SQLite) store into this directory, as `stead backup --to` does")
    .option("--backup-every <duration>", "how often, with --backup-dir (default 24h)")
    .option("--backup-keep <n>", "how many of the newest backups to keep there, with --backup-dir (default 7)")
    .action(
      act(async (files: string[], o: WorkerCommandOptions, cmd: Command) => {
        checkWorkerOptions(o);
        const connectTimeoutMs = o.connectTimeout === undefined ? undefined : parseDuration(o.connectTimeout, "--connect-timeout");
        const metricsAt = o.metrics === undefined ? undefined : parseListen(o.metrics, "--metrics");
        const schedule = backupSchedule(o);
        const definitions = await workerDefinitions(files);
        // A store not reachable yet (Postgres starting or restarting) is waited for, each try printed.
        const onRetry = (e: SteadError, attempt: number, delayMs: number) =>
          writeErr(`stead: ${e.message}; trying again in ${formatDuration(delayMs)} (try ${attempt}${connectTimeoutMs === undefined ? "" : `, giving up after --connect-timeout ${formatDuration(connectTimeoutMs)}`})`);
        return withStead(cmd, true, async (stead) => {
          if (schedule && (await stead.admin.storeInfo()).dialect !== "sqlite") {
            throw new SteadError("STEAD_BAD_OPTION", `--backup-dir backs up SQLite stores; ${stead.location} is a Postgres database`, {
              fix: "drop --backup-dir and back the database up with its own tools (pg_dump, or base backups with WAL archiving)",
            });
          }
          const { worker: w, names, concurrency } = cliWorker(stead, definitions, o);
          const backups = schedule && new ScheduledBackups(stead.location, schedule, { taken: (line) => print(`${clock(Date.now())}  ${line}`), failed: (line) => writeErr(`stead: ${line}`) });
          // Loaded only with --metrics: prom-client costs every other start a fifth of a second.
          const metricsServer = metricsAt ? await serveWorkerMetrics(w, metricsAt) : undefined;
          // The handlers stay installed until exit, so a second signal still exits at once.
          const stopped = new Promise<NodeJS.Signals>((resolve) => onInterrupt(resolve));
          const fatal = new Promise<{ fatal: unknown }>((resolve) => w.once("fatal", (e) => resolve({ fatal: e })));
          w.start();
          print(`worker ${w.owner.workerId} started: ${names.join(", ")} (store ${stead.location}, concurrency ${concurrency})`);
          if (metricsServer) print(`metrics on ${metricsServer.url}/metrics`);
          if (backups && schedule) {
            backups.start();
            print(`backups of the store every ${formatDuration(schedule.everyMs)} into ${schedule.dir}, keeping the newest ${schedule.keep}`);
          }
          try {
            const signal = await Promise.race([stopped, fatal]);
            if (typeof signal === "object") {
              // The store is gone: every run stopped without writing; nothing more can be recorded.
              reportError(signal.fatal);
              return EXIT.store;
            }
            print(`${signal}: stopping; runs in flight finish their current step and are handed back (signal again to exit at once)`);
            const inFlight = w.inFlight;
            await w.stop();
            print(`worker stopped${inFlight ? `; ${inFlight} run(s) handed back for any worker` : ""}`);
            return EXIT.ok;
          } finally {
            await backups?.stop();
            await metricsServer?.close();
          }
        }, { connectTimeoutMs, onRetry });
      }),
    );
  example(worker, "stead worker ./triage.ts ./nightly.ts --concurrency 20", "stead worker ./agents.ts --metrics 9464");
}
