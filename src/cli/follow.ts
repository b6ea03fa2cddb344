import type { WorkspaceOptions } from "../engine/runs/workspace.js";
import type { AnyDefinition } from "../engine/definitions/definition.js";
import type { Stead } from "../stead/stead.js";
import type { RunInfo } from "../engine/runs/views.js";
import { print } from "./context.js";
import { EXIT, type ExitCode } from "./exit-codes.js";
import { describeEvent, describeStorage, json } from "./format.js";
import { LiveText } from "./live-text.js";
import { wayOutLines } from "./ways-out.js";
import { writeErr } from "./report-error.js";

/**
 * SIGINT/SIGTERM handling for a foreground process: the first signal calls `onFirst` (a graceful
 * stop), a second one exits at once with 130. Returns a function that removes the handlers.
 */
export function onInterrupt(onFirst: (signal: NodeJS.Signals) => void): () => void {
  let count = 0;
  const handler = (signal: NodeJS.Signals) => {
    count += 1;
    if (count > 1) {
      writeErr(`stead: second ${signal}: exiting now`);
      process.exit(EXIT.interrupted);
    }
    onFirst(signal);
  };
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
  return () => {
    process.off("SIGINT", handler);
    process.off("SIGTERM", handler);
  };
}

/** Prints the way a run now stands and returns the exit code for it. */
export async function reportRun(stead: Stead, run: RunInfo, interrupted: boolean): Promise<ExitCode> {
  const explainAndList = async () => {
    const why = await stead.runs.why(run.id);
    print(why.text);
    for (const line of wayOutLines(why)) print(line);
  };
  switch (run.status) {
    case "completed":
      print(`run ${run.id} completed`);
      if (run.output !== undefined) print(json(run.output));
      return EXIT.ok;
    case "failed":
      print(`run ${run.id} failed: ${run.error?.code ? `${run.error.code}: ` : ""}${run.error?.message ?? "unknown error"}`);
      return EXIT.failed;
    case "waiting":
      await explainAndList();
      return EXIT.waiting;
    case "held":
      await explainAndList();
      return EXIT.held;
    case "paused":
      await explainAndList();
      return EXIT.paused;
    case "cancelled":
      print(`run ${run.id} was cancelled${run.error?.message ? ` (${run.error.message})` : ""}`);
      return EXIT.cancelled;
    default:
      // pending or running: only after an interrupt (follow returns otherwise only once settled).
      await explainAndList();
      return interrupted ? EXIT.interrupted : EXIT.internal;
  }
}

/**
 * Executes a run (and its children) in this process, printing one line per interesting event,
 * until it ends or parks; returns the exit code for how it stands. The first SIGINT/SIGTERM stops
 * gracefully (the run is handed back as pending for any worker), a second exits at once.
 */
export async function followForeground(
  stead: Stead,
  runId: string,
  definitions: readonly AnyDefinition[],
  options: { eventsFrom?: string; workspace?: WorkspaceOptions } = {},
): Promise<ExitCode> {
  const controller = new AbortController();
  const off = onInterrupt((signal) => {
    writeErr(`stead: ${signal}: stopping after the current step and handing run ${runId} back (signal again to exit at once)`);
    controller.abort();
  });
  let run: RunInfo;
  const live = new LiveText(stead);
  try {
    run = await stead.runs.follow(runId, definitions, {
      signal: controller.signal,
      ...(options.eventsFrom === undefined ? {} : { eventsFrom: options.eventsFrom }),
      ...(options.workspace ? { workspace: options.workspace } : {}),
      onEvent: async (raw) => {
        const e = await live.expand(raw);
        const text = describeEvent(e, true);
        if (text !== null) print(`  ${e.runId === runId ? "" : `[${e.runId}] `}${text}`);
      },
      onError: (e) => writeErr(`stead: worker error: ${e instanceof Error ? e.message : String(e)}`),
      onStorage: (r) => writeErr(`stead: ${describeStorage(r)}`),
    });
  } finally {
    off();
  }
  return reportRun(stead, run, controller.signal.aborted);
}
