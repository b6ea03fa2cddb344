/**
 * `why`'s ways out rendered as `stead …` commands: one line each under an explanation, and the
 * `commands` of `stead why --json`. An argument a person must supply is printed as a placeholder.
 */
import type { Explanation, WayOut } from "../engine/runs/why.js";

/** Quotes for a POSIX shell unless the text is plainly safe. */
const q = (s: string) => (/^[A-Za-z0-9_.:/@=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** The `stead` command that takes a way out. */
export function commandFor(way: WayOut): string {
  const id = q(way.runId);
  switch (way.verb) {
    case "worker":
      return way.args.module ? `stead worker ${q(way.args.module)}` : `stead worker <file exporting ${way.args.definition}>`;
    case "events":
      return `stead logs ${id} -f`;
    case "get":
      return `stead status ${id}`;
    case "approve":
      return `stead approve ${id} ${q(way.args.wait)}${way.supply.includes("input") ? " --edit '<json>'" : ""}${way.args.scope ? ` --scope ${way.args.scope}` : ""}`;
    case "deny":
      return `stead deny ${id} ${q(way.args.wait)}${way.supply.includes("reason") ? ' --reason "..."' : ""}`;
    case "signal":
      return `stead signal ${id} ${q(way.args.name)}${way.supply.includes("payload") ? " '<json>'" : ""}`;
    case "release":
      return `stead release ${id} ${q(way.args.hold)} --choice ${way.args.choice}${way.supply.includes("result") ? " --result '<json>'" : ""}`;
    case "why":
    case "pause":
    case "resume":
    case "retry":
    case "cancel":
    case "fork":
      return `stead ${way.verb} ${id}`;
  }
}

/** The lines printed under an explanation's text. */
export function wayOutLines(e: Explanation): string[] {
  return e.waysOut.map((w) => `  ${w.what}: ${commandFor(w)}`);
}

/** `stead why --json`: the explanation with each way out as its command. */
export function whyJson(e: Explanation): { runId: string; status: string; text: string; commands: { what: string; command: string }[] } {
  return { runId: e.runId, status: e.status, text: e.text, commands: e.waysOut.map((w) => ({ what: w.what, command: commandFor(w) })) };
}
