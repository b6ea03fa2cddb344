import type { Command } from "commander";
import type { Stead } from "../../engine/stead.js";
import type { EventView, RunInfo } from "../../engine/views.js";
import { SteadError } from "../../errors.js";
import { TERMINAL_STATUSES, type RunStatus } from "../../store/types.js";
import { inStatusColour, statusColour } from "../colour.js";
import { LiveText } from "../live-text.js";
import { act, example, parsePositiveInt, print, printJson, withStead } from "../context.js";
import { EXIT, type ExitCode } from "../exit-codes.js";
import { age, eventLine, holdLabel, json, stepDuration, stepsDone, table, truncate, waitLabel } from "../format.js";

const STATUSES: readonly RunStatus[] = ["pending", "running", "waiting", "held", "paused", "completed", "failed", "cancelled"];

function parseStatuses(text: string): RunStatus[] {
  const list = text.split(",").map((s) => s.trim()).filter(Boolean);
  const bad = list.filter((s) => !(STATUSES as readonly string[]).includes(s));
  if (bad.length > 0 || list.length === 0) {
    throw new SteadError("STEAD_BAD_OPTION", `unknown run status ${JSON.stringify(bad[0] ?? text)}`, {
      fix: `use a comma-separated list of: ${STATUSES.join(", ")}`,
    });
  }
  return list as RunStatus[];
}

async function summary(stead: Stead, run: RunInfo) {
  const [waits, holds, journal] = await Promise.all([stead.waits(run.id), stead.holds({ runId: run.id }), stead.journal(run.id)]);
  return {
    id: run.id,
    definition: run.definition,
    status: run.status,
    waitingFor: waits.filter((w) => w.status === "open").map((w) => ({ kind: w.kind, name: w.name, wakeAt: w.wakeAt })),
    holds: holds.map((h) => ({ id: h.id, kind: h.kind, stepId: h.stepId, reason: h.reason, ...(h.kind === "storage" ? { since: typeof h.details.since === "number" ? h.details.since : h.createdAt } : {}) })),
    stepsDone: stepsDone(journal),
    parentId: run.parentId,
    createdAt: run.createdAt,
    // A run's row changes with its state, not at every step: its last activity is the later of the two.
    updatedAt: Math.max(run.updatedAt, ...journal.map((s) => s.completedAt ?? s.startedAt)),
  };
}

/** Exit code of `logs -f` once the run has ended. */
const ENDED: Partial<Record<RunStatus, ExitCode>> = { completed: EXIT.ok, failed: EXIT.failed, cancelled: EXIT.cancelled };

async function eventsAfter(stead: Stead, runId: string, afterSeq: number): Promise<EventView[]> {
  const out: EventView[] = [];
  for (let after = afterSeq; ; ) {
    const page = await stead.events({ runId, afterSeq: after, limit: 1000 });
    out.push(...page);
    const last = page[page.length - 1];
    if (page.length < 1000 || !last) return out;
    after = last.seq;
  }
}

export function registerInspect(program: Command): void {
  const ps = program
    .command("ps")
    .description("list runs: status, what each waits for or why it is held, steps done")
    .option("--status <s,...>", `only runs with these statuses (${STATUSES.join(",")})`)
    .option("--limit <n>", "at most this many runs, newest first", "50")
    .option("--json", "print JSON")
    .action(
      act(async (o: { status?: string; limit: string; json?: boolean }, cmd: Command) => {
        const status = o.status === undefined ? undefined : parseStatuses(o.status);
        const limit = parsePositiveInt(o.limit, "--limit");
        await withStead(cmd, "read", async (stead) => {
          const runs = await stead.list({ ...(status ? { status } : {}), limit });
          const rows = await Promise.all(runs.map((r) => summary(stead, r)));
          if (o.json) return printJson(rows);
          if (rows.length === 0) return print(status ? `no ${status.join("/")} runs` : "no runs");
          print(
            table(
              ["ID", "DEFINITION", "STATUS", "WAITING FOR / HOLD", "STEPS", "UPDATED"],
              rows.map((r) => [
                r.id,
                r.definition,
                statusColour(r.status),
                [...r.waitingFor.map((w) => waitLabel(w)), ...r.holds.map((h) => (h.since !== undefined ? `storage full since ${new Date(h.since).toISOString()}` : h.kind))].join(", ") || "-",
                String(r.stepsDone),
                age(r.updatedAt),
              ]),
            ),
          );
          if (runs.length === limit) {
            const total = await stead.count(status ? { status } : {});
            if (total > runs.length) print(`${runs.length} of ${total} ${status ? `${status.join("/")} ` : ""}runs shown (newest first); see more with --limit ${total}`);
          }
        });
      }),
    );
  example(ps, "stead ps --status waiting,held", "stead ps --json --limit 500");

  const status = program
    .command("status")
    .description("one run in full: fields, journal, open waits and holds, output or error")
    .argument("<run>", "run id")
    .option("--json", "print JSON")
    .action(
      act(async (runId: string, o: { json?: boolean }, cmd: Command) => {
        await withStead(cmd, "read", async (stead) => {
          const run = await stead.get(runId);
          const [journal, waits, holds] = await Promise.all([stead.journal(runId), stead.waits(runId), stead.holds({ runId, open: false })]);
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
          const w = await stead.why(runId);
          if (o.json) return printJson(w);
          print(inStatusColour(w.status, w.text));
          for (const c of w.commands) print(`  ${c.what}: ${c.command}`);
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
          let last = 0;
          const first = await eventsAfter(stead, runId, 0);
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
            if (o.json) printJson(await Promise.all(first.map((e) => live.expand(e))));
            else for (const e of first) await show(e);
            return EXIT.ok;
          }
          for (let batch = first; ; batch = await eventsAfter(stead, runId, last)) {
            for (const e of batch) {
              await show(e);
              last = e.seq;
            }
            const run = await stead.get(runId);
            const ended = ENDED[run.status];
            // Ended, and every event up to the end is printed (the final event commits with the status).
            if (ended !== undefined && TERMINAL_STATUSES.includes(run.status) && (await eventsAfter(stead, runId, last)).length === 0) return ended;
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
          const list = await stead.holds({ open: !o.all });
          if (o.json) return printJson(list);
          if (list.length === 0) return print(o.all ? "no holds" : "no open holds");
          print(
            table(
              ["RUN", "HOLD", "KIND", "STEP", "REASON", ...(o.all ? ["STATUS"] : []), "AGE"],
              list.map((h) => [h.runId, String(h.id), h.kind, h.stepId ?? "-", truncate(h.reason, 80), ...(o.all ? [h.choice ? `released (${h.choice})` : h.status] : []), age(h.createdAt)]),
            ),
          );
          print(`release one with: stead release <run> <hold> --choice <choice>  (see \`stead why <run>\`)`);
        });
      }),
    );
  example(holds, "stead holds", "stead holds --all --json");
}
