import { ERROR_CODES, isSteadCode } from "../errors.js";

/** Exit codes of the `stead` command. Scripts depend on them: never renumber, only add. */
export const EXIT = {
  ok: 0,
  failed: 1,
  refused: 2,
  waiting: 3,
  held: 4,
  paused: 5,
  cancelled: 6,
  store: 7,
  internal: 70,
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export const EXIT_CODE_HELP: readonly { code: ExitCode; meaning: string }[] = [
  { code: EXIT.ok, meaning: "ok; for run and --follow: the run completed" },
  { code: EXIT.failed, meaning: "the run failed" },
  { code: EXIT.refused, meaning: "bad input or refused: unknown run, wait or hold, wrong state, not a store, usage error" },
  { code: EXIT.waiting, meaning: "the run is parked waiting (approval, signal, timer)" },
  { code: EXIT.held, meaning: "the run is on hold until a person releases it" },
  { code: EXIT.paused, meaning: "the run is paused" },
  { code: EXIT.cancelled, meaning: "the run was cancelled" },
  { code: EXIT.store, meaning: "the store is gone (deleted or replaced while in use), cannot write (full), cannot be reached, or holds damaged or tampered data (STEAD_DATA_TAMPERED: restore it from a backup)" },
  { code: EXIT.internal, meaning: "internal error (a bug in stead or the store)" },
  { code: EXIT.interrupted, meaning: "interrupted by SIGINT/SIGTERM before the run settled (it was handed back)" },
];

/**
 * The exit code for a Stead error's code, from the code table in errors.ts. A code this copy of
 * Stead does not know (an error from another copy a user's workflow loaded) is a refusal.
 */
export function exitFor(code: string): ExitCode {
  return isSteadCode(code) ? EXIT[ERROR_CODES[code].exit] : EXIT.refused;
}

/** Thrown by a command to end the process with `code` once its output is written. */
export class CliExit extends Error {
  constructor(readonly code: ExitCode) {
    super(`exit ${code}`);
    this.name = "CliExit";
  }
}
