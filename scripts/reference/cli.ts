/**
 * docs/reference/cli.md from the `stead` commander program as `buildProgram()` makes it: every
 * command, its arguments, options (defaults, choices, required) and the examples its help prints.
 * Nothing is parsed or run. The order is the program's own, so the page changes only when the CLI does.
 */
import type { EventEmitter } from "node:events";
import type { Argument, Command, Option } from "commander";

const cell = (s: string): string => s.replace(/\|/g, "\\|").replace(/\n/g, " ");

/** `stead sessions show`: the names from the root down. */
function pathOf(c: Command): string[] {
  const names: string[] = [];
  for (let at: Command | null = c; at; at = at.parent) names.unshift(at.name());
  return names;
}

/** What the help prints after the usage (examples, exit codes): the `addHelpText("after")` text. */
function afterHelp(c: Command): string {
  let out = "";
  (c as unknown as EventEmitter).emit("afterHelp", { error: false, command: c, write: (s: string) => (out += s) });
  return out.trim();
}

function argumentRow(a: Argument): string {
  const shown = `${a.required ? "<" : "["}${a.name()}${a.variadic ? "..." : ""}${a.required ? ">" : "]"}`;
  return `| \`${shown}\` | ${a.required ? "yes" : "no"} | ${cell(a.description)} |`;
}

function optionRow(o: Option): string {
  const notes: string[] = [];
  if (o.mandatory) notes.push("required");
  if (o.argChoices) notes.push(`one of ${o.argChoices.map((c) => `\`${c}\``).join(", ")}`);
  // A `--no-x` option's default is the `true` commander gives its positive twin: not worth a note.
  if (o.defaultValue !== undefined && !o.negate) notes.push(`default \`${o.defaultValueDescription ?? String(o.defaultValue)}\``);
  if (o.envVar) notes.push(`env \`${o.envVar}\``);
  return `| \`${cell(o.flags)}\` | ${cell(o.description)}${notes.length ? ` (${notes.join("; ")})` : ""} |`;
}

function commandSection(c: Command): string[] {
  const path = pathOf(c);
  const out = [`## ${path.join(" ")}`, "", "```", `${path.join(" ")} ${c.usage()}`, "```", "", cell(c.description()), ""];
  if (c.registeredArguments.length) out.push("| argument | required | description |", "| --- | --- | --- |", ...c.registeredArguments.map(argumentRow), "");
  const options = c.options.filter((o) => !o.hidden);
  if (options.length) out.push("| option | description |", "| --- | --- |", ...options.map(optionRow), "");
  if (c.commands.length) out.push(`Subcommands: ${c.commands.map((s) => `[${[...path, s.name()].join(" ")}](#${[...path, s.name()].join("-")})`).join(", ")}.`, "");
  const after = afterHelp(c);
  if (after) out.push("```", after, "```", "");
  return out;
}

function commands(c: Command): Command[] {
  return c.commands.flatMap((s) => [s, ...commands(s)]);
}

export function renderCliReference(program: Command): string {
  const globals = program.options.filter((o) => !o.hidden);
  return [
    "# `stead` command reference",
    "",
    "<!-- Generated from the commander program in src/cli/main.ts (buildProgram) by scripts/gen-reference.ts;",
    "     test/docs.reference.test.ts checks it. Regenerate: npm run docs -->",
    "",
    `${cell(program.description())}`,
    "",
    "`stead <command> --help` prints what a section here says. How the commands work together is in the guides",
    "([workflows](../guides/workflows.md), [operations](../guides/operations.md), …); every code a refusal names is in [errors.md](../errors.md).",
    "",
    "## stead",
    "",
    "```",
    `stead ${program.usage()}`,
    "```",
    "",
    "Options every command takes:",
    "",
    "| option | description |",
    "| --- | --- |",
    ...globals.map(optionRow),
    "",
    `Commands: ${program.commands.map((s) => `[${s.name()}](#stead-${s.name()})`).join(", ")}.`,
    "",
    "```",
    afterHelp(program),
    "```",
    "",
    ...commands(program).flatMap(commandSection),
  ].join("\n");
}
