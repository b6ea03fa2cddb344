import type { Command } from "commander";
import { act, defaultBy, example, print, withStead } from "../context.js";

const q = (s: string) => (/^[A-Za-z0-9_.:/@=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

export function registerControl(program: Command): void {
  const pause = program
    .command("pause")
    .description("pause a run: parked now if pending or waiting, after its current step if running")
    .argument("<run>", "run id")
    .action(
      act(async (runId: string, _o: unknown, cmd: Command) => {
        await withStead(cmd, false, async (stead) => {
          const r = await stead.pause(runId);
          print(r === "paused" ? `run ${runId} paused; resume it with: stead resume ${q(runId)}` : `pause requested: run ${runId} parks after its current step`);
        });
      }),
    );
  example(pause, "stead pause 01J2ZK8Q4M");

  const cancel = program
    .command("cancel")
    .description("cancel a run and its unfinished child runs")
    .argument("<run>", "run id")
    .option("--reason <text>", "why (recorded)")
    .option("--by <who>", "who cancels it (default $USER@host)")
    .action(
      act(async (runId: string, o: { reason?: string; by?: string }, cmd: Command) => {
        await withStead(cmd, false, async (stead) => {
          const ids = await stead.cancel(runId, { ...(o.reason === undefined ? {} : { reason: o.reason }), by: o.by ?? defaultBy() });
          const children = ids.filter((id) => id !== runId);
          print(`run ${runId} cancelled${children.length ? ` with ${children.length} child run(s): ${children.join(", ")}` : ""}`);
        });
      }),
    );
  example(cancel, "stead cancel 01J2ZK8Q4M --reason 'superseded'");

  const fork = program
    .command("fork")
    .description("a new run of the same definition and input, reusing the journal up to a step")
    .argument("<run>", "run id")
    .option("--at <step>", "reuse the journal up to and including this step (default: every finished entry)")
    .option("--id <runId>", "the new run's id (default: a fresh one)")
    .action(
      act(async (runId: string, o: { at?: string; id?: string }, cmd: Command) => {
        await withStead(cmd, false, async (stead) => {
          const src = await stead.get(runId);
          const r = await stead.fork(runId, { ...(o.at === undefined ? {} : { at: o.at }), ...(o.id === undefined ? {} : { id: o.id }) });
          print(`run ${r.id} forked from ${runId} (${src.definition}), reusing ${r.reused} journal entries; it is pending`);
          print(`run it with: stead worker ${src.module ? q(src.module) : `<file exporting ${src.definition}>`}`);
        });
      }),
    );
  example(fork, "stead fork 01J2ZK8Q4M --at fetch-issue");
}
