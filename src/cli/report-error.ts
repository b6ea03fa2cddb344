import { CommanderError } from "commander";
import { CliExit, EXIT } from "./exit-codes.js";
import { describeThrown } from "../thrown.js";
import { errorPrefix } from "./colour.js";

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  fix?: unknown;
  stack?: unknown;
}

/** A SteadError from any copy of this package (a user's workflow may load another). */
function isSteadErrorLike(e: unknown): e is ErrorLike & { code: string; message: string } {
  const x = e as ErrorLike | null;
  try {
    return typeof x === "object" && x !== null && typeof x.code === "string" && x.code.startsWith("STEAD_") && typeof x.message === "string";
  } catch {
    // A thrown value whose getters throw is no SteadError.
    return false;
  }
}

/** Codes that say the store itself failed, not the request: exit code 7. */
const STORE_FAULTS: ReadonlySet<string> = new Set(["STEAD_STORE_LOST", "STEAD_STORAGE_FULL", "STEAD_STORE_UNREACHABLE"]);

export const oneLine = (s: string): string => s.replace(/\s*\n\s*/g, " ").trim();

/** Writes the error on one stderr line and returns the exit code for it. */
export function reportError(e: unknown): number {
  if (e instanceof CliExit) return e.code;
  if (e instanceof CommanderError) {
    // Commander has printed its message (or the help) already.
    if (e.code === "commander.helpDisplayed" || e.code === "commander.version") return EXIT.ok;
    return EXIT.refused;
  }
  if (isSteadErrorLike(e)) {
    const fix = typeof e.fix === "string" && e.fix ? ` — ${e.fix}` : "";
    process.stderr.write(`${errorPrefix()} ${oneLine(e.message)}${fix.replace(/\s*\n\s*/g, " ")}\n`);
    return STORE_FAULTS.has(e.code) ? EXIT.store : EXIT.refused;
  }
  const described = describeThrown(e);
  process.stderr.write(`${errorPrefix()} internal error: ${oneLine(described.message)}\n`);
  if (process.env.STEAD_DEBUG && described.stack) process.stderr.write(`${described.stack}\n`);
  return EXIT.internal;
}

