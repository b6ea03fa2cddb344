import type { Command } from "commander";
import type { DefinitionView } from "../../engine/definitions/served-definitions.js";
import { act, defaultBy, example, keyOf, print, printJson, readJsonInput, shellQuote, withKeyOption, withStead } from "../context.js";
import { age, printable, table, truncate } from "../format.js";

/** A fingerprint short enough for a table: a module graph's hash to 8 digits, an agent's after its prefix; a pinned version as it is. */
export function shortFingerprint(fp: string): string {
  if (/^[0-9a-f]{16}$/.test(fp)) return fp.slice(0, 8);
  const agent = /^agent:([0-9a-f]{16})$/.exec(fp);
  return agent?.[1] ? `agent:${agent[1].slice(0, 8)}` : truncate(fp, 24);
}

function fingerprintCell(d: DefinitionView): string {
  const [first, ...more] = d.fingerprints;
  return first === undefined ? "-" : `${printable(shortFingerprint(first))}${more.length ? ` +${more.length}` : ""}`;
}

export function registerDefinitions(program: Command): void {
  const definitions = program
    .command("definitions")
    .description("the definitions workers announce: which live workers serve each, its fingerprint and input schema (no code is loaded)")
    .option("--json", "print JSON: every fingerprint on record, each input's JSON Schema, the live workers")
    .action(
      act(async (o: { json?: boolean }, cmd: Command) => {
        await withStead(cmd, "read", async (stead) => {
          const all = await stead.definitions.list();
          if (o.json) return printJson(all);
          if (all.length === 0) return print("no definitions announced yet: a worker announces the ones it serves when it starts (stead worker <file>)");
          print(
            table(
              ["NAME", "KIND", "WORKERS", "FINGERPRINT", "INPUT SCHEMA", "LAST SEEN"],
              all.map((d) => [printable(d.name), printable(d.kind), String(d.workers.length), fingerprintCell(d), d.inputSchema ? "yes" : "no", d.served ? "now" : age(d.lastSeenAt)]),
            ),
          );
        });
      }),
    );
  example(definitions, "stead definitions", "stead definitions --json | jq '.[] | select(.served | not) | .name'");

  const start = withKeyOption(
    program
      .command("start")
      .description("start a run of a definition by name, without its code: the input is checked against the schema its workers announced; a worker runs it")
      .argument("<name>", "a definition's name, as `stead definitions` lists it")
      .option("--input <json>", "the run's input, as JSON (- reads it from standard input)")
      .option("--input-file <path>", "read the run's input, as JSON, from this file")
      .option("--id <runId>", "the run's id, without '.' (kept for child runs); default: a fresh one")
      .option("--workspace <dir>", "a directory the run works in, on the machine of the worker that runs it")
      .option("--by <who>", "who starts it (default $USER@host)")
      .option("--json", "print JSON: { id, already, served, workers }"),
  ).action(
    act(async (name: string, o: { input?: string; inputFile?: string; id?: string; workspace?: string; by?: string; json?: boolean; idempotencyKey?: string }, cmd: Command) => {
      const input: unknown = (await readJsonInput(o)) ?? null;
      await withStead(cmd, false, async (stead) => {
        const r = await stead.runs.startByName(name, input, {
          ...(o.id === undefined ? {} : { id: o.id }),
          ...(o.workspace === undefined ? {} : { workspace: o.workspace }),
          by: o.by ?? defaultBy(),
          ...keyOf(o),
        });
        if (o.json) return printJson({ id: r.id, already: r.already, served: r.served, workers: r.workers });
        const status = r.already ? (await stead.runs.get(r.id)).status : "pending";
        const started = r.already ? `run ${r.id} was already started with this key (${name}), ${status}` : `run ${r.id} started (${name}), ${status}`;
        if (r.served) return print(`${started}; ${r.workers} live worker${r.workers === 1 ? "" : "s"} serve${r.workers === 1 ? "s" : ""} it`);
        const [known] = await stead.definitions.list({ name });
        print(`${started}: no live worker serves ${name} now; it waits until one does`);
        print(`run one with: stead worker ${known?.module ? shellQuote(printable(known.module)) : "<file>"}`);
      });
    }),
  );
  example(start, `stead start fixer --input '{"issue": "the date parser test fails"}'`, "stead start nightly --idempotency-key nightly-2026-06-01");
}
