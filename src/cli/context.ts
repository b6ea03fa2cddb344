import { readFileSync } from "node:fs";
import { hostname, userInfo } from "node:os";
import type { Command } from "commander";
import { createStead, type Stead } from "../engine/stead.js";
import { SteadError } from "../errors.js";
import { CliExit, EXIT, type ExitCode } from "./exit-codes.js";

/** The store location from `--store`; undefined lets openStore apply STEAD_DATABASE_URL, STEAD_STORE, `.stead/stead.db`. */
export function storeOption(cmd: Command): string | undefined {
  const store = cmd.optsWithGlobals<{ store?: string }>().store;
  return store === undefined || store === "" ? undefined : store;
}

/**
 * Opens the store. Read and answer verbs pass `create: false`: a missing store is STEAD_STORE_MISSING,
 * and a file that is not a Stead store (or is too new) is refused before anything is written.
 */
export async function openStead(cmd: Command, create: boolean): Promise<Stead> {
  const store = storeOption(cmd);
  const stead = createStead({ ...(store === undefined ? {} : { store }), create });
  try {
    await stead.ready();
  } catch (e) {
    await stead.close().catch(() => undefined);
    throw e;
  }
  return stead;
}

/** Who answers: `--by`, else `$USER@host`. */
export function defaultBy(): string {
  let user = process.env.USER ?? process.env.USERNAME;
  if (!user) {
    try {
      user = userInfo().username;
    } catch {
      user = "unknown";
    }
  }
  return `${user}@${hostname()}`;
}

/** Parses a JSON argument; invalid JSON is STEAD_BAD_INPUT naming the option and the parser's complaint. */
export function parseJsonArg(text: string, what: string, fix = `quote it for the shell, e.g. ${what} '{"key": "value"}'`): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new SteadError("STEAD_BAD_INPUT", `${what} is not valid JSON (${e instanceof Error ? e.message : String(e)})`, { fix });
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * A JSON input given as `--input <json>`, `--input -` (standard input) or `--input-file <path>`
 * (inputs larger than a command line may be). Undefined when none is given.
 */
export async function readJsonInput(o: { input?: string; inputFile?: string }): Promise<unknown> {
  if (o.input !== undefined && o.inputFile !== undefined) {
    throw new SteadError("STEAD_BAD_INPUT", "--input and --input-file both give the run's input", { fix: "pass one of them" });
  }
  if (o.inputFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(o.inputFile, "utf8");
    } catch (e) {
      throw new SteadError("STEAD_BAD_INPUT", `cannot read --input-file ${o.inputFile} (${e instanceof Error ? e.message : String(e)})`, {
        fix: "pass the path of a file holding the input as JSON, or --input - to read it from standard input",
      });
    }
    return parseJsonArg(text, `--input-file ${o.inputFile}`, "fix the JSON in the file");
  }
  if (o.input === "-") {
    const text = await readStdin();
    const fix = `pipe the input in as JSON, e.g. echo '{"key": "value"}' | stead run <file> --input -`;
    if (text.trim() === "") throw new SteadError("STEAD_BAD_INPUT", "the input on standard input is empty", { fix });
    return parseJsonArg(text, "the input on standard input", fix);
  }
  return o.input === undefined ? undefined : parseJsonArg(o.input, "--input");
}

/** `s` as one shell word. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_.:/@=+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A positive integer option (`--limit`, `--concurrency`). */
export function parsePositiveInt(text: string, what: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < 1) {
    throw new SteadError("STEAD_BAD_INPUT", `${what} must be a positive whole number, not ${JSON.stringify(text)}`, {
      fix: `for example ${what} 10`,
    });
  }
  return n;
}

export function print(line = ""): void {
  process.stdout.write(`${line}\n`);
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Wraps a command's action: a non-zero exit code it returns ends the process with that code. */
export function act<A extends unknown[]>(fn: (...args: A) => Promise<ExitCode | void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    const code = await fn(...args);
    if (code !== undefined && code !== EXIT.ok) throw new CliExit(code);
  };
}

/** Adds "Example:" lines under a command's help. */
export function example(cmd: Command, ...lines: string[]): Command {
  return cmd.addHelpText("after", `\nExample:\n${lines.map((l) => `  $ ${l}`).join("\n")}\n`);
}

/** Opens the store, runs `fn`, and closes the store whatever happens. */
export async function withStead<T>(cmd: Command, create: boolean, fn: (stead: Stead) => Promise<T>): Promise<T> {
  const stead = await openStead(cmd, create);
  try {
    return await fn(stead);
  } finally {
    await stead.close();
  }
}
