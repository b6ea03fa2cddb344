import { CommanderError } from "commander";
import { CliExit, EXIT, exitFor } from "./exit-codes.js";
import { describeThrown } from "../thrown.js";
import { errorPrefix } from "./colour.js";
import { redactTokens } from "../redaction/redact.js";
import { printable } from "./format.js";

/**
 * Writes one line to stderr with every access token in it redacted: errors and worker messages
 * may quote what a caller or a definition's code wrote. The CLI's stderr goes through here.
 */
export function writeErr(line: string): void {
  process.stderr.write(`${redactTokens(line)}\n`);
}

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


export const oneLine = (s: string): string => s.replace(/\s*\n\s*/g, " ").trim();

/**
 * Writes the error on one stderr line and returns the exit code for it. With `json`, a Stead
 * error's line is `{"error":{"code","message","fix",…ids}}`, for scripts to act on the code.
 */
export function reportError(e: unknown, json = false): number {
  if (e instanceof CliExit) return e.code;
  if (e instanceof CommanderError) {
    // Commander has printed its message (or the help) already.
    if (e.code === "commander.helpDisplayed" || e.code === "commander.version") return EXIT.ok;
    return EXIT.refused;
  }
  if (isSteadErrorLike(e)) {
    if (json) writeErr(JSON.stringify({ error: jsonError(e) }));
    else {
      const fix = typeof e.fix === "string" && e.fix ? ` — ${e.fix}` : "";
      // A message may quote what a file, a model or a person wrote (a damaged backup's value): shown, never sent as control codes.
      writeErr(`${errorPrefix()} ${printable(oneLine(e.message))}${printable(fix.replace(/\s*\n\s*/g, " "))}`);
    }
    return exitFor(e.code);
  }
  const described = describeThrown(e);
  writeErr(`${errorPrefix()} internal error: ${printable(oneLine(described.message))}`);
  if (process.env.STEAD_DEBUG && described.stack) writeErr(described.stack);
  return EXIT.internal;
}


/** A Stead error as data: its code, message, fix and the ids it names (runId, stepId, wait, …). */
function jsonError(e: ErrorLike & { code: string; message: string }): Record<string, unknown> {
  const out: Record<string, unknown> = { code: e.code, message: e.message };
  if (typeof e.fix === "string" && e.fix) out.fix = e.fix;
  try {
    for (const [k, v] of Object.entries((e as { details?: unknown }).details ?? {})) {
      if (k !== "fix" && !(k in out) && (v === null || ["string", "number", "boolean"].includes(typeof v))) out[k] = v;
    }
  } catch {
    // Details whose getters throw are left out; the code and message suffice.
  }
  return out;
}
