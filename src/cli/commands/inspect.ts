import type { Command } from "commander";
import type { Stead } from "../../stead/stead.js";
import type { EventView } from "../../engine/runs/views.js";
import { TERMINAL_STATUSES, type RunStatus } from "../../store/types.js";
import { inStatusColour, statusColour } from "../colour.js";
import { LiveText } from "../live-text.js";
import { registerPs } from "./ps.js";
import { act, example, print, printJson, withStead } from "../context.js";
import { EXIT, type ExitCode } from "../exit-codes.js";
import { age, eventLine, holdLabel, json, printable, stepDuration, stepsDone, table, truncate, waitLabel } from "../format.js";
import { writeErr } from "../report-error.js";
import { wayOutLines, whyJson } from "../ways-out.js";

/** Exit code of `logs -f` once the run has ended. */
const ENDED: Partial<Record<RunStatus, ExitCode>> = { completed: EXIT.ok, failed: EXIT.failed, cancelled: EXIT.cancelled };

/** A run's events from `position` (null: its first) to what is committed now, and the position after them. */
async function eventsFrom(stead: Stead, runId: string, position: string | null): Promise<{ events: EventView[]; position: string }> {
  const events: EventView[] = [];
  for (;;) {
    const page = await stead.runs.eventsAfter(position, { runId, limit: 1000 });
    events.push(...page.events);
    position = page.position;
    if (page.events.length < 1000) return { events, position };
  }
}

export function registerInspect(program: Command): void {
  registerPs(program);

  const status = program
    .command("status")
    .description("one run in full: fields, journal, open waits and holds, output or error")
    .argument("<run>", "run id")
    .option("--json", "print JSON")
    .action(
      act(async (runId: string, o: { json?: boolean }, cmd: Command) => {
        await withStead(cmd, "read", async (stead) => {
          const run = await stead.runs.get(runId);
          const [journal, waits, holds] = await Promise.all([stead.runs.journal(runId), stead.runs.waits(runId), stead.holds.list({ runId, open: false })]);
          if (o.json) return printJson({ run, journal, waits, holds });
          const fields: [string, string][] = [
            ["run", run.id],
            ["definition", run.definition],
            ["status", `${statusColour(run.status)}${run.pauseRequested ? " (pause requested)" : ""}`],
            ["module", run.module ?? "-"],
            ["fingerprint", run.fingerprint ?? "- (adopted at the next claim)"],
            ["created", `${new Date(run.createdAt).toISOString()} (${age(run.createdAt)})`],
            ["updated", `${new Date(run.updatedAt).toISOString()} (${age(run.updatedAt)})`],
            ["claims", `${run.fence}${run.lostClaims ? ` (${run.lostClaims} lost in a row)` : ""}`],
          ];
          if (run.lease) fields.push(["lease", `${run.lease.owner} (host ${run.lease.host ?? "?"}, pid ${run.lease.pid ?? "?"}${run.lease.expiresAt ? `, until ${new Date(run.lease.expiresAt).toISOString()}` : ""})`]);
          if (run.parentId) fields.push(["parent", run.parentId]);
          fields.push(["input", truncate(json(run.input), 200)]);
          for (const [k, v] of fields) print(`${k.padEnd(12)}${v}`);
          print();
          print(`journal (${journal.length} entries, ${stepsDone(journal)} steps done):`);
          if (journal.length > 0) {
            print(table(["SEQ", "STEP", "KIND", "STATUS", "ATTEMPT", "DURATION"], journal.map((s) => [String(s.seq), s.id, s.kind, statusColour(s.status), String(s.attempt), stepDuration(s)])));
          }
          const open = waits.filter((w) => w.status === "open");
          if (open.length > 0) {
            print();
            print("open waits:");
            for (const w of open) print(`  ${waitLabel(w)}, since ${age(w.createdAt)}${w.request !== undefined ? `: ${truncate(json(w.request), 160)}` : ""}`);
          }
          if (holds.length > 0) {
            print();
            print("holds:");
            for (const h of holds) print(`  ${holdLabel(h)} ${h.status}${h.stepId ? ` at step "${h.stepId}"` : ""}: ${h.reason}${h.choice ? ` (released with ${h.choice}${h.releasedBy ? ` by ${h.releasedBy}` : ""})` : ""}`);
          }
          print();
          if (run.status === "completed") print(`output: ${json(run.output)}`);
          else if (run.error) print(`error: ${run.error.code ? `${run.error.code}: ` : ""}${run.error.message}`);
          else print(`see why: stead why ${run.id}`);
        });
      }),
    );
  example(status, "stead status 01J2ZK8Q4M", "stead status 01J2ZK8Q4M --json | jq .journal");

  const why = program
    .command("why")
    .description("why a run is where it is, and the exact commands that move it on")
    .argument("<run>", "run id")
    .option("--json", "print JSON")
    .action(
      act(async (runId: string, o: { json?: boolean }, cmd: Command) => {
        await withStead(cmd, "read", async (stead) => {
          const w = await stead.runs.why(runId);
          if (o.json) return printJson(whyJson(w));
          print(inStatusColour(w.status, w.text));
          for (const line of wayOutLines(w)) print(line);
        });
      }),
    );
  example(why, "stead why 01J2ZK8Q4M");

  const logs = program
    .command("logs")
    .description("a run's events, one line each; -f follows live until the run ends")
    .argument("<run>", "run id")
    .option("-f, --follow", "keep printing new events until the run completes, fails or is cancelled")
    .option("--json", "print JSON (an array; with -f, one JSON object per line)")
    .action(
      act(async (runId: string, o: { follow?: boolean; json?: boolean }, cmd: Command) =>
        withStead(cmd, "read", async (stead): Promise<ExitCode> => {
          let steps = 0;
          const live = new LiveText(stead);
          const show = async (raw: EventView) => {
            const e = await live.expand(raw);
            if (o.json) return void process.stdout.write(`${JSON.stringify(e)}\n`);
            if (e.type === "step.completed") steps += 1;
            // Following live, completed steps carry a running count: progress at a glance.
            print(`${eventLine(e)}${o.follow && e.type === "step.completed" ? `  [${steps} done]` : ""}`);
          };
          if (!o.follow) {
            const { events } = await eventsFrom(stead, runId, null);
            if (o.json) printJson(await Promise.all(events.map((e) => live.expand(e))));
            else for (const e of events) await show(e);
            return EXIT.ok;
          }
          for (let position: string | null = null; ; ) {
            // The status first: the final event commits with it, so the read after it has printed everything once it has ended.
            const run = await stead.runs.get(runId);
            const batch = await eventsFrom(stead, runId, position);
            for (const e of batch.events) await show(e);
            position = batch.position;
            const ended = ENDED[run.status];
            if (ended !== undefined && TERMINAL_STATUSES.includes(run.status)) return ended;
            await new Promise((r) => setTimeout(r, 200));
          }
        }),
      ),
    );
  example(logs, "stead logs 01J2ZK8Q4M", "stead logs 01J2ZK8Q4M -f");

  const holds = program
    .command("holds")
    .description("list open holds (runs stopped until a person releases them)")
    .option("--all", "include released holds")
    .option("--json", "print JSON")
    .action(
      act(async (o: { all?: boolean; json?: boolean }, cmd: Command) => {
        await withStead(cmd, "read", async (stead) => {
          const list = await stead.holds.list({ open: !o.all });
          if (o.json) return printJson(list);
          if (list.length === 0) return print(o.all ? "no holds" : "no open holds");
          print(
            table(
              ["RUN", "HOLD", "KIND", "STEP", "REASON", ...(o.all ? ["STATUS"] : []), "AGE"],
              list.map((h) => [h.runId, String(h.id), h.kind, h.stepId ?? "-", h.damaged ? `damaged: ${h.damaged.code}` : truncate(h.reason, 80), ...(o.all ? [h.choice ? `released (${h.choice})` : h.status] : []), age(h.createdAt)]),
            ),
          );
          for (const h of list) if (h.damaged) writeErr(`hold ${h.id} of run ${h.runId} is damaged: ${printable(h.damaged.message)}`);
          print(`release one with: stead release <run> <hold> --choice <choice>  (see \`stead why <run>\`)`);
        });
      }),
    );
  example(holds, "stead holds", "stead holds --all --json");
}
