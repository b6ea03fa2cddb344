import { existsSync } from "node:fs";
import { Option, type Command } from "commander";
import type { Stead } from "../../stead/stead.js";
import type { ReleaseChoice } from "../../engine/runs/holds.js";
import { SteadError } from "../../errors.js";
import { act, byAt, defaultBy, example, keyOf, parseJsonArg, print, withKeyOption, withStead } from "../context.js";
import { EXIT, type ExitCode } from "../exit-codes.js";
import { followForeground } from "../follow.js";
import { loadFile } from "../load.js";

/**
 * After an answer: executes the run here, loading its definition from the module the run recorded.
 * The answer is already committed; a module that cannot be loaded is reported, not undone.
 */
async function followAfterAnswer(stead: Stead, runId: string): Promise<ExitCode> {
  const run = await stead.runs.get(runId);
  const fix = `start a worker for it instead: stead worker <file exporting ${run.definition}>`;
  if (!run.module) {
    throw new SteadError("STEAD_DEFINITION_NOT_FOUND", `the answer was recorded, but run ${runId} did not record the module of ${run.definition}, so it cannot be followed here`, { runId, fix });
  }
  if (!existsSync(run.module)) {
    throw new SteadError("STEAD_DEFINITION_NOT_FOUND", `the answer was recorded, but the module of run ${runId} (${run.module}) is missing`, { runId, fix });
  }
  const loaded = await loadFile(run.module);
  if (!loaded.definitions.some((d) => d.name === run.definition)) {
    throw new SteadError("STEAD_DEFINITION_NOT_FOUND", `the answer was recorded, but ${run.module} no longer exports workflow "${run.definition}"`, { runId, fix });
  }
  // Print only what happens after the answer, not the run's history. A read of no run reads
  // nothing, and its position is the stream as it is now: everything committed is behind it.
  const { position } = await stead.runs.eventsAfter(null, { runIds: [] });
  return followForeground(stead, runId, loaded.definitions, { eventsFrom: position });
}

const FOLLOW_HELP = "then execute the run here (loading its recorded module) until it ends or parks; exit code as for `stead run`";

interface DecisionOptions {
  idempotencyKey?: string;
  by?: string;
  reason?: string;
  edit?: string;
  scope?: string;
  follow?: boolean;
}

export function registerAnswer(program: Command): void {
  for (const d of [
    { verb: "approve", approved: true, description: "approve what a run waits for; the run resumes by itself on any worker", eg: ["stead approve 01J2ZK8Q4M deploy --reason 'checked the diff' --follow", `stead approve 01J2ZK8Q4M approve:call_7 --edit '{"title":"Fix the date parser"}' --scope run`] },
    { verb: "deny", approved: false, description: "deny what a run waits for; the workflow sees approved: false", eg: ["stead deny 01J2ZK8Q4M deploy --reason 'tests are red'"] },
  ]) {
    const cmd = program
      .command(d.verb)
      .description(d.description)
      .argument("<run>", "run id")
      .argument("<name>", "the approval's name (see `stead why <run>`)");
    if (d.approved) {
      cmd
        .option("--reason <text>", "why")
        .option("--edit <json>", "an agent's tool call: run it with these arguments instead (checked against the tool's input schema)")
        .addOption(new Option("--scope <scope>", "an agent's tool call: once, or for every later call of the tool in this run").choices(["once", "run"]));
    } else cmd.requiredOption("--reason <text>", "why (recorded, and given to the workflow or the model)");
    withKeyOption(cmd)
      .option("--by <who>", "who decides (default $USER@host)")
      .option("--follow", FOLLOW_HELP)
      .action(
        act(async (runId: string, name: string, o: DecisionOptions, c: Command) =>
          withStead(c, false, async (stead) => {
            const by = o.by ?? defaultBy();
            const edited = o.edit === undefined ? undefined : parseJsonArg(o.edit, "--edit");
            const decision = { by, reason: o.reason ?? null, ...(edited !== undefined ? { input: edited } : {}), ...(o.scope ? { scope: o.scope as "once" | "run" } : {}), ...keyOf(o) };
            const r = await (d.approved ? stead.runs.approve(runId, name, decision) : stead.runs.deny(runId, name, decision));
            const verb = d.approved ? "approved" : "denied";
            print(r.already ? `"${name}" on run ${runId} was already ${verb}${byAt(r.by, r.at)}; nothing changed` : `${verb} "${name}" on run ${runId} (by ${by})`);
            return o.follow ? followAfterAnswer(stead, runId) : EXIT.ok;
          }),
        ),
      );
    example(cmd, ...d.eg);
  }

  const signal = withKeyOption(
    program
      .command("signal")
      .description("deliver a signal a run waits for, with an optional JSON payload")
      .argument("<run>", "run id")
      .argument("<name>", "the signal's name (see `stead why <run>`)")
      .argument("[json]", "the payload, as JSON (default null)"),
  )
    .option("--by <who>", "who sends it (default $USER@host)")
    .option("--follow", FOLLOW_HELP)
    .action(
      act(async (runId: string, name: string, payloadText: string | undefined, o: DecisionOptions, cmd: Command) => {
        const payload = payloadText === undefined ? null : parseJsonArg(payloadText, "the signal payload");
        return withStead(cmd, false, async (stead) => {
          const r = await stead.runs.signal(runId, name, payload, { by: o.by ?? defaultBy(), ...keyOf(o) });
          print(r.already ? `signal "${name}" was already delivered to run ${runId}${byAt(r.by, r.at)}; nothing changed` : `signal "${name}" delivered to run ${runId}`);
          return o.follow ? followAfterAnswer(stead, runId) : EXIT.ok;
        });
      }),
    );
  example(signal, `stead signal 01J2ZK8Q4M review-done '{"score": 4}'`);

  const release = withKeyOption(
    program
      .command("release")
      .description("release a run's hold by taking one of its ways out")
      .argument("<run>", "run id")
      .argument("[hold]", "the hold's id or kind (optional when the run has one open hold)"),
  )
    .addOption(new Option("--choice <choice>", "the way out (see `stead why <run>`)").choices(["retry", "skip", "result", "accept-change"]).makeOptionMandatory())
    .option("--result <json>", "with --choice result: the step's outcome, as JSON")
    .option("--by <who>", "who releases it (default $USER@host)")
    .option("--follow", FOLLOW_HELP)
    .action(
      act(async (runId: string, hold: string | undefined, o: { choice: ReleaseChoice; result?: string; by?: string; follow?: boolean; idempotencyKey?: string }, cmd: Command) => {
        const result = o.result === undefined ? undefined : parseJsonArg(o.result, "--result");
        return withStead(cmd, false, async (stead) => {
          const by = o.by ?? defaultBy();
          const released = await stead.runs.release(runId, hold, { choice: o.choice, by, ...(result === undefined ? {} : { result }), ...keyOf(o) });
          print(
            released.already
              ? `hold ${released.kind} (#${released.id}) of run ${runId} was already released with "${released.choice ?? o.choice}"${byAt(released.releasedBy, released.releasedAt)}; nothing changed`
              : `released hold ${released.kind} (#${released.id}) of run ${runId} with "${o.choice}"; the run is pending again`,
          );
          return o.follow ? followAfterAnswer(stead, runId) : EXIT.ok;
        });
      }),
    );
  example(release, "stead release 01J2ZK8Q4M ambiguous_effect --choice result --result '{\"charged\": true}'", "stead release 01J2ZK8Q4M --choice retry --follow");

  const resume = withKeyOption(
    program
      .command("resume")
      .description("resume a paused run, or a cancelled one from its last completed step (with the children cancelled with it); with --accept-change, a run held for changed code")
      .argument("<run>", "run id"),
  )
    .option("--accept-change", "release a definition_changed hold by accepting the new code")
    .option("--by <who>", "who resumes it (default $USER@host)")
    .option("--follow", FOLLOW_HELP)
    .action(
      act(async (runId: string, o: { acceptChange?: boolean; by?: string; follow?: boolean; idempotencyKey?: string }, cmd: Command) =>
        withStead(cmd, false, async (stead) => {
          const r = await stead.runs.resume(runId, { ...(o.acceptChange ? { acceptChange: true } : {}), by: o.by ?? defaultBy(), ...keyOf(o) });
          const children = r.resumed.filter((id) => id !== runId);
          if (r.already) print(`run ${runId} was already resumed; nothing changed`);
          else if (o.acceptChange) print(`run ${runId} accepts the changed code and is pending again`);
          else print(`run ${runId} resumed${r.from === "cancelled" ? " from its last completed step" : ""}${children.length ? `, with ${children.length} child run(s) cancelled with it: ${children.join(", ")}` : ""}`);
          return o.follow ? followAfterAnswer(stead, runId) : EXIT.ok;
        }),
      ),
    );
  example(resume, "stead resume 01J2ZK8Q4M", "stead resume 01J2ZK8Q4M --accept-change --follow");
}
