import { Option, type Command } from "commander";
import { checkWorkspace } from "../../workspace/workspace-path.js";
import type { WorkspacePolicy } from "../../workspace/restore.js";
import { formatDuration, parseDuration } from "../../engine/durations.js";
import { checkRunId } from "../../engine/ids.js";
import { DEFAULT_PAYLOAD_LIMIT, encodePayload } from "../../engine/payload.js";
import { describeOutcome } from "../../worker/worker.js";
import { SteadError } from "../../errors.js";
import { act, example, parsePositiveInt, print, readJsonInput, shellQuote, storeOption, withStead } from "../context.js";
import { EXIT } from "../exit-codes.js";
import { followForeground, onInterrupt } from "../follow.js";
import { clock, describeStorage } from "../format.js";
import { reportError } from "../report-error.js";
import { loadFile, loadFiles, pickWorkflow } from "../load.js";

interface RunOptions {
  idempotencyKey?: string;
  input?: string;
  inputFile?: string;
  detach?: boolean;
  workflow?: string;
  id?: string;
  workspace?: string;
  workspacePolicy?: string;
}

interface WorkerCliOptions {
  concurrency?: string;
  lease?: string;
  poll?: string;
  workspacePolicy?: string;
  connectTimeout?: string;
}

function workspacePolicyOption(): Option {
  return new Option("--workspace-policy <policy>", "on resume, files changed after the last completed step: put back (restore) or keep").choices(["restore", "keep"]);
}

export function registerRun(program: Command): void {
  const run = program
    .command("run")
    .description("start a run of a workflow file and execute it here until it ends or parks")
    .argument("<file>", "a .ts or .js file exporting workflows (no build step needed)")
    .option("--input <json>", "the run's input, as JSON (- reads it from standard input)")
    .option("--input-file <path>", "read the run's input, as JSON, from this file")
    .option("--workflow <name>", "which workflow, when the file exports several")
    .option("--id <runId>", "the run's id (default: a fresh one)")
    .option("--workspace <dir>", "a directory the run works in: snapshotted after each effect/tool step, restored when the run resumes")
    .addOption(workspacePolicyOption())
    .option("--idempotency-key <key>", "start at most one run for this key: a repeat follows the run the first call started")
    .option("--detach", "only start the run (pending) and print its id; a worker executes it")
    .action(
      act(async (file: string, o: RunOptions, cmd: Command) => {
        if (o.detach && o.workspacePolicy !== undefined) {
          throw new SteadError("STEAD_BAD_OPTION", "--workspace-policy applies to the process that executes the run, and --detach executes nothing here", {
            fix: "pass it to `stead worker` instead",
          });
        }
        if (o.id !== undefined) checkRunId(o.id);
        // Input first: a bad --input must be refused before anything is loaded or written.
        const input: unknown = (await readJsonInput(o)) ?? null;
        const workspace = o.workspace === undefined ? undefined : checkWorkspace(o.workspace);
        const loaded = await loadFile(file);
        const definition = pickWorkflow(loaded, file, o.workflow);
        // start() checks the size again; checked here too so an input over the ceiling creates no store.
        encodePayload(input, `the input of ${definition.name}`, DEFAULT_PAYLOAD_LIMIT);
        return withStead(cmd, true, async (stead) => {
          const { id, already } = await stead.start(definition, input, {
            ...(o.id === undefined ? {} : { id: o.id }),
            ...(workspace ? { workspace } : {}),
            ...(o.idempotencyKey === undefined ? {} : { idempotencyKey: o.idempotencyKey }),
          });
          const started = already ? `run ${id} was already started with this key` : `run ${id} started (${definition.name})${workspace ? `, workspace ${workspace}` : ""}`;
          if (o.detach) {
            const store = storeOption(cmd);
            print(`${started}, not executed here; it is ${already ? (await stead.get(id)).status : "pending"}`);
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

  const worker = program
    .command("worker")
    .description("claim and execute runs of the workflows in these files until SIGINT/SIGTERM")
    .argument("<files...>", ".ts or .js files exporting workflows")
    .option("--concurrency <n>", "runs executed at once", "10")
    .option("--lease <ms>", "lease length (ms or a duration like 30s)", "30s")
    .option("--poll <ms>", "claim and sweep period when idle (ms or a duration)", "200")
    .option("--connect-timeout <duration>", "give up (exit 7) if the store cannot be reached for this long at start (default: keep trying)")
    .addOption(workspacePolicyOption())
    .action(
      act(async (files: string[], o: WorkerCliOptions, cmd: Command) => {
        const concurrency = parsePositiveInt(o.concurrency ?? "10", "--concurrency");
        const leaseMs = parseDuration(o.lease ?? "30s", "--lease");
        const pollMs = parseDuration(o.poll ?? "200", "--poll");
        const connectTimeoutMs = o.connectTimeout === undefined ? undefined : parseDuration(o.connectTimeout, "--connect-timeout");
        const definitions = await loadFiles(files);
        // A store not reachable yet (Postgres starting or restarting) is waited for, each try printed.
        const onRetry = (e: SteadError, attempt: number, delayMs: number) =>
          process.stderr.write(`stead: ${e.message}; trying again in ${formatDuration(delayMs)} (try ${attempt}${connectTimeoutMs === undefined ? "" : `, giving up after --connect-timeout ${formatDuration(connectTimeoutMs)}`})\n`);
        return withStead(cmd, true, async (stead) => {
          const w = stead.worker({ definitions, concurrency, leaseMs, pollMs, ...(o.workspacePolicy ? { workspace: { policy: o.workspacePolicy as WorkspacePolicy } } : {}) });
          w.on("claimed", (id) => print(`${clock(Date.now())}  claimed ${id}`));
          w.on("outcome", (id, outcome) => print(`${clock(Date.now())}  ${id} ${describeOutcome(outcome)}`));
          w.on("error", (e) => process.stderr.write(`stead: worker error: ${e instanceof Error ? e.message : String(e)}\n`));
          w.on("storage", (r) => process.stderr.write(`stead: ${describeStorage(r)}\n`));
          // The handlers stay installed until exit, so a second signal still exits at once.
          const stopped = new Promise<NodeJS.Signals>((resolve) => onInterrupt(resolve));
          const fatal = new Promise<{ fatal: unknown }>((resolve) => w.once("fatal", (e) => resolve({ fatal: e })));
          w.start();
          print(`worker ${w.owner.workerId} started: ${definitions.map((d) => d.name).join(", ")} (store ${stead.store.location}, concurrency ${concurrency})`);
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
        }, { connectTimeoutMs, onRetry });
      }),
    );
  example(worker, "stead worker ./triage.ts ./nightly.ts --concurrency 20");
}
