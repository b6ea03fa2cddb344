/**
 * `stead mcp`: the MCP server over stdio, for a desktop or IDE client that starts it as a child
 * process. Standard output carries the protocol and nothing else; every diagnostic goes to
 * standard error. Decisions are recorded as `--by` (default `$USER@host`), as the CLI's are. It
 * ends when the client closes standard input, or on SIGINT or SIGTERM.
 */
import type { Command } from "commander";
import { act, defaultBy, example, openStead } from "../context.js";
import { redactTokens } from "../../redaction/redact.js";

const say = (line: string) => process.stderr.write(redactTokens(`stead mcp: ${line}\n`));

export function registerMcp(program: Command): void {
  const mcp = program
    .command("mcp")
    .description("serve MCP (Model Context Protocol) over stdio: a tool per verb (runs, why, events, approve, deny, signal, release, …) and runs as resources, for desktop and IDE clients")
    .option("--by <who>", "who decides, recorded with every decision (default $USER@host)")
    .option("--read-only", "open the store for reading only: the control tools are refused")
    .action(
      act(async (o: { by?: string; readOnly?: boolean }, cmd: Command) => {
        // Loaded here, not with every `stead` command: the MCP SDK takes a third of a second to load.
        const [{ serveStdio }, { localCaller }] = await Promise.all([import("../../server/mcp/stdio.js"), import("../../server/mcp/caller.js")]);
        const stead = await openStead(cmd, o.readOnly ? "read" : false);
        const served = await serveStdio(stead, localCaller(o.by ?? defaultBy(), o.readOnly === true), say);
        say(`serving ${stead.location} over stdio${o.readOnly ? " (read-only)" : ""}`);
        await served.ended;
        await served.close();
        await stead.close();
      }),
    );
  example(mcp, "stead mcp", "stead mcp --store postgres://stead@db/stead --by alice");
}
