import type { Command } from "commander";
import { act, byAt, defaultBy, example, keyOf, print, withKeyOption, withStead } from "../context.js";

const q = (s: string) => (/^[A-Za-z0-9_.:/@=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

export function registerControl(program: Command): void {
  const pause = withKeyOption(
    program
      .command("pause")
      .description("pause a run: parked now if pending or waiting, after its current step if running")
      .argument("<run>", "run id")
      .option("--by <who>", "who pauses it (default $USER@host)"),
  ).action(
    act(async (runId: string, o: { by?: string; idempotencyKey?: string }, cmd: Command) => {
      await withStead(cmd, false, async (stead) => {
        const r = await stead.runs.pause(runId, { by: o.by ?? defaultBy(), ...keyOf(o) });
        const what = r.state === "paused" ? `paused; resume it with: stead resume ${q(runId)}` : "to pause after its current step";
        print(r.already ? `run ${runId} was already ${r.state === "paused" ? "paused" : "asked to pause"}; nothing changed` : r.state === "paused" ? `run ${runId} ${what}` : `pause requested: run ${runId} parks after its current step`);
      });
    }),
  );
  example(pause, "stead pause 01J2ZK8Q4M");

  const cancel = withKeyOption(
    program
      .command("cancel")
      .description("cancel a run and its unfinished child runs (nothing is deleted: `stead resume` brings them back)")
      .argument("<run>", "run id")
      .option("--reason <text>", "why (recorded)")
      .option("--by <who>", "who cancels it (default $USER@host)"),
  ).action(
    act(async (runId: string, o: { reason?: string; by?: string; idempotencyKey?: string }, cmd: Command) => {
      await withStead(cmd, false, async (stead) => {
        const r = await stead.runs.cancel(runId, { ...(o.reason === undefined ? {} : { reason: o.reason }), by: o.by ?? defaultBy(), ...keyOf(o) });
        if (r.already) return print(`run ${runId} was already cancelled${byAt(r.by, r.at)}; nothing changed`);
        const children = r.cancelled.filter((id) => id !== runId);
        print(`run ${runId} cancelled${children.length ? ` with ${children.length} child run(s): ${children.join(", ")}` : ""}; bring it back with: stead resume ${q(runId)}`);
      });
    }),
  );
  example(cancel, "stead cancel 01J2ZK8Q4M --reason 'superseded'");

  const fork = withKeyOption(
    program
      .command("fork")
      .description("a new run of the same definition and input, reusing the journal up to a step")
      .argument("<run>", "run id")
      .option("--at <step>", "reuse the journal up to and including this step (default: every finished entry)")
      .option("--id <runId>", "the new run's id, without '.' (kept for child runs); default: a fresh one")
      .option("--by <who>", "who forks it (default $USER@host)"),
  ).action(
      act(async (runId: string, o: { at?: string; id?: string; by?: string; idempotencyKey?: string }, cmd: Command) => {
        await withStead(cmd, false, async (stead) => {
          const src = await stead.runs.get(runId);
          const r = await stead.runs.fork(runId, { ...(o.at === undefined ? {} : { at: o.at }), ...(o.id === undefined ? {} : { id: o.id }), by: o.by ?? defaultBy(), ...keyOf(o) });
          print(r.already ? `run ${r.id} was already forked from ${runId} with this key; nothing changed` : `run ${r.id} forked from ${runId} (${src.definition}), reusing ${r.reused} journal entries; it is pending`);
          print(`run it with: stead worker ${src.module ? q(src.module) : `<file exporting ${src.definition}>`}`);
        });
      }),
    );
  example(fork, "stead fork 01J2ZK8Q4M --at fetch-issue");

  const retry = withKeyOption(
    program
      .command("retry")
      .description("give a failed run's failed step a new attempt (after fixing its cause); nothing before it runs again")
      .argument("<run>", "run id")
      .option("--by <who>", "who retries it (default $USER@host)"),
  ).action(
    act(async (runId: string, o: { by?: string; idempotencyKey?: string }, cmd: Command) => {
      await withStead(cmd, false, async (stead) => {
        const r = await stead.runs.retry(runId, { by: o.by ?? defaultBy(), ...keyOf(o) });
        const run = await stead.runs.get(runId);
        const step = r.stepId ? `step "${r.stepId}" gets attempt ${r.attempt ?? "?"}` : "it is replayed from its journal";
        print(r.already ? `run ${runId} was already retried (${step}); nothing changed` : `run ${runId} is pending again: ${step}; a worker runs it: stead worker ${run.module ? q(run.module) : `<file exporting ${run.definition}>`}`);
      });
    }),
  );
  example(retry, "stead retry 01J2ZK8Q4M");
}
