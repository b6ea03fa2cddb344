import { readFileSync } from "node:fs";
import { hostname, userInfo } from "node:os";
import type { Command } from "commander";
import { createStead } from "../stead/create-stead.js";
import type { Stead } from "../stead/stead.js";
import { checkPayloadDepth } from "../engine/payload.js";
import { SteadError } from "../errors.js";
import { CliExit, EXIT, type ExitCode } from "./exit-codes.js";

/** The store location from `--store`; undefined lets openStore apply STEAD_DATABASE_URL, STEAD_STORE, `.stead/stead.db`. */
export function storeOption(cmd: Command): string | undefined {
  const store = cmd.optsWithGlobals<{ store?: string }>().store;
  return store === undefined || store === "" ? undefined : store;
}

/**
 * How a verb opens the store: `true` creates it when missing (run, worker, migrate, import); `false`
 * changes an existing one (answer and control verbs); `"read"` reads an existing one through a
 * read-only connection, with no migration (ps, status, why, logs, export …), so that a user who
 * may only read the store can inspect it.
 */
export type StoreAccess = boolean | "read";

/**
 * Opens the store. Unless it may create it, a missing store is STEAD_STORE_MISSING, and a file that
 * is not a Stead store (or is too new) is refused before anything is written. With `wait`, a store
 * that cannot be reached yet is tried again until it can (or the wait's timeout).
 */
export async function openStead(cmd: Command, access: StoreAccess, wait?: WaitForStore): Promise<Stead> {
  const store = storeOption(cmd);
  const stead = createStead({ ...(store === undefined ? {} : { store }), create: access === true, ...(access === "read" ? { readonly: true } : {}) });
  try {
    if (wait) {
      await stead.readyWhenReachable({ ...(wait.connectTimeoutMs === undefined ? {} : { timeoutMs: wait.connectTimeoutMs }), onRetry: wait.onRetry });
    } else await stead.ready();
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

/**
 * Parses a JSON argument; invalid JSON is STEAD_BAD_JSON naming the option and the parser's
 * complaint, and JSON nested deeper than a payload may be is STEAD_PAYLOAD_TOO_DEEP, both before
 * any store is opened.
 */
export function parseJsonArg(text: string, what: string, fix = `quote it for the shell, e.g. ${what} '{"key": "value"}'`): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (e) {
    throw new SteadError("STEAD_BAD_JSON", `${what} is not valid JSON (${e instanceof Error ? e.message : String(e)})`, { fix });
  }
  checkPayloadDepth(value, what);
  return value;
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
    throw new SteadError("STEAD_BAD_OPTION", "--input and --input-file both give the run's input", { fix: "pass one of them" });
  }
  if (o.inputFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(o.inputFile, "utf8");
    } catch (e) {
      throw new SteadError("STEAD_BAD_PATH", `cannot read --input-file ${o.inputFile} (${e instanceof Error ? e.message : String(e)})`, {
        fix: "pass the path of a file holding the input as JSON, or --input - to read it from standard input",
      });
    }
    return parseJsonArg(text, `--input-file ${o.inputFile}`, "fix the JSON in the file");
  }
  if (o.input === "-") {
    const text = await readStdin();
    const fix = `pipe the input in as JSON, e.g. echo '{"key": "value"}' | stead run <file> --input -`;
    if (text.trim() === "") throw new SteadError("STEAD_BAD_JSON", "the input on standard input is empty", { fix });
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
    throw new SteadError("STEAD_BAD_OPTION", `${what} must be a positive whole number, not ${JSON.stringify(text)}`, {
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

/** `--idempotency-key`, on every control command. */
export function withKeyOption(cmd: Command): Command {
  return cmd.option("--idempotency-key <key>", "make the command safe to retry: a repeat with this key returns the first result and changes nothing");
}

/** The key option as the library takes it. */
export function keyOf(o: { idempotencyKey?: string }): { idempotencyKey?: string } {
  return o.idempotencyKey === undefined ? {} : { idempotencyKey: o.idempotencyKey };
}

/** " by alice at 2026-…", for what a person did. */
export function byAt(by: string | null | undefined, at: number | null | undefined): string {
  return `${by ? ` by ${by}` : ""}${typeof at === "number" && at > 0 ? ` at ${new Date(at).toISOString()}` : ""}`;
}

/** Adds "Example:" lines under a command's help. */
export function example(cmd: Command, ...lines: string[]): Command {
  return cmd.addHelpText("after", `\nExample:\n${lines.map((l) => `  $ ${l}`).join("\n")}\n`);
}

/** How a long-running command waits for a store it cannot reach yet. */
export interface WaitForStore {
  /** Give up after this long; undefined: keep trying. */
  connectTimeoutMs: number | undefined;
  onRetry: (e: SteadError, attempt: number, delayMs: number) => void;
}

/** Opens the store, runs `fn`, and closes the store whatever happens. */
export async function withStead<T>(cmd: Command, access: StoreAccess, fn: (stead: Stead) => Promise<T>, wait?: WaitForStore): Promise<T> {
  const stead = await openStead(cmd, access, wait);
  try {
    return await fn(stead);
  } finally {
    await stead.close();
  }
}
