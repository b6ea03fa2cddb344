import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Command } from "commander";
import { registerAnswer } from "./commands/answer.js";
import { registerBackup } from "./commands/backup.js";
import { registerControl } from "./commands/control.js";
import { registerDefinitions } from "./commands/definitions.js";
import { registerInspect } from "./commands/inspect.js";
import { registerMcp } from "./commands/mcp.js";
import { registerRun } from "./commands/run.js";
import { registerServe } from "./commands/serve.js";
import { registerSessions } from "./commands/sessions.js";
import { registerKeys } from "./commands/keys.js";
import { registerTokens } from "./commands/tokens.js";
import { registerTransfer } from "./commands/transfer.js";
import { registerWorkspace } from "./commands/workspace.js";
import { EXIT, EXIT_CODE_HELP } from "./exit-codes.js";
import { oneLine, reportError } from "./report-error.js";
import { errorPrefix } from "./colour.js";
import { redactTokens } from "../redaction/redact.js";

/** From package.json, two levels up from both src/cli and dist/cli. */
function version(): string {
  try {
    return (JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8")) as { version?: string }).version ?? "unknown";
  } catch {
    return "unknown";
  }
}

export function buildProgram(): Command {
  const program = new Command("stead")
    .description("Durable runs for long-running AI agents and workflows: kill it at any instant and every run comes back at its last completed step.")
    .version(version(), "-V, --version")
    .option("--store <path|url>", "the store: an SQLite file or a postgres:// URL (default: $STEAD_DATABASE_URL, $STEAD_STORE, or ./.stead/stead.db)")
    .exitOverride()
    // Usage errors on one stderr line, like every other refusal.
    .configureOutput({ outputError: (text, write) => write(redactTokens(`${errorPrefix()} ${oneLine(text.replace(/^error: /, ""))} (see --help)\n`)) })
    .addHelpText(
      "after",
      `\nExit codes:\n${EXIT_CODE_HELP.map((e) => `  ${String(e.code).padStart(3)}  ${e.meaning}`).join("\n")}\n\nExample:\n  $ stead run ./triage.ts --input '{"issue": 42}'\n  $ stead why <run>\n`,
    );
  registerRun(program);
  registerDefinitions(program);
  registerInspect(program);
  registerAnswer(program);
  registerControl(program);
  registerSessions(program);
  registerTransfer(program);
  registerBackup(program);
  registerTokens(program);
  registerKeys(program);
  registerServe(program);
  registerMcp(program);
  registerWorkspace(program);
  return program;
}

/** Whether the command line asks for JSON output (`--json` before any `--`): its errors are JSON too. */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).includes("--json");
}

/** Parses `argv` and runs the command; resolves to the process exit code. */
export async function main(argv: readonly string[] = process.argv): Promise<number> {
  try {
    await buildProgram().parseAsync([...argv]);
    return EXIT.ok;
  } catch (e) {
    return reportError(e, wantsJson(argv));
  }
}

/** The `stead` executable: runs `main`, flushes output, exits with its code. */
export async function cli(): Promise<never> {
  // A reader that went away (`stead ps | head`) ends the command quietly.
  process.stdout.on("error", (e: NodeJS.ErrnoException) => process.exit(e.code === "EPIPE" ? EXIT.ok : EXIT.internal));
  const code = await main(process.argv);
  // Exit explicitly: tsx's loader thread or a definition's stray timer must not keep a finished command alive.
  await Promise.all([process.stdout, process.stderr].map((s) => new Promise<void>((r) => s.write("", () => r()))));
  process.exit(code);
}
