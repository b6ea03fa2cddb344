import { SteadError } from "../../errors.js";
import { argsDigestOf, plainDigest } from "../../store/args-digest.js";
import type { IdempotencyKeys, IdempotencyRow, IdempotencyWrite } from "../../store/types.js";
import { idExcerpt } from "../ids.js";
import { canonical } from "../canonical.js";

/** The control commands that take an idempotency key. */
export type ControlVerb = "start" | "send" | "approve" | "deny" | "signal" | "release" | "pause" | "resume" | "cancel" | "fork" | "retry";

/** Keys are kept at least this long by default (`createStead({ idempotencyTtlMs })`). */
export const DEFAULT_IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** One call of a control command made with a key. */
export interface KeyedCall {
  verb: ControlVerb;
  /** What the key is scoped to besides the verb: the run, the session, or (start) the definition. */
  scope: string;
  key: string;
  /** The command's arguments: a repeat with other arguments is refused. */
  args: unknown;
  by: string | null;
  ttlMs: number;
}

/** A result that says whether this call did the work or found it done (same key, or the same decision recorded). */
export type Replayable<T> = T & { already: boolean };

export function checkKey(key: unknown): string {
  if (typeof key !== "string" || key.length === 0 || key.length > 200 || [...key].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f)) {
    throw new SteadError("STEAD_BAD_OPTION", `invalid idempotency key ${typeof key === "string" ? idExcerpt(key) : String(key)}`, {
      fix: "use 1-200 printable characters, the same for every retry of one command (a ticket id, a UUID)",
    });
  }
  return key;
}

export function sameArgs(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

const argsText = (args: unknown): string => JSON.stringify(canonical(args)) ?? "null";

function summaryOf(args: unknown): string {
  const text = JSON.stringify(canonical(args)) ?? "null";
  return text.length <= 300 ? text : `${text.slice(0, 299)}…`;
}

function writeOf(store: IdempotencyKeys, call: KeyedCall, result: unknown): IdempotencyWrite {
  return { verb: call.verb, scope: call.scope, key: call.key, digest: argsDigestOf(store, argsText(call.args)), summary: summaryOf(call.args), result: JSON.stringify(result), actor: call.by, ttlMs: call.ttlMs };
}

/**
 * The first call's result when this key is recorded with the same arguments; a conflict when with
 * others. A key recorded before digests were redacted and keyed holds the arguments' plain
 * SHA-256: it is recognised by that until it expires (the store returns no expired key).
 */
async function recorded<T>(store: IdempotencyKeys, call: KeyedCall): Promise<T | undefined> {
  const row = await store.idempotencyKey(call.verb, call.scope, call.key);
  if (!row) return undefined;
  const text = argsText(call.args);
  if (row.digest !== argsDigestOf(store, text) && row.digest !== plainDigest(text)) throw conflict(call, row);
  return JSON.parse(row.result) as T;
}

function conflict(call: KeyedCall, row: IdempotencyRow): SteadError {
  return new SteadError(
    "STEAD_IDEMPOTENCY_CONFLICT",
    `idempotency key ${idExcerpt(call.key)} was first used for ${call.verb} ${idExcerpt(call.scope)} with other arguments, at ${new Date(row.createdAt).toISOString()}${row.actor ? ` by ${row.actor}` : ""}: ${row.summary}`,
    { key: call.key, fix: "a retry must repeat the first call's arguments exactly; a new command needs a new key" },
  );
}

/**
 * Runs a control command at most once per key. Without a key, `act` runs as is. With one: a key
 * recorded with the same arguments returns the first result (`already: true`) and changes
 * nothing; with other arguments it is refused. Otherwise `act` runs and must commit the key it is
 * given in the same transaction as its change (so the key exists exactly when the change does);
 * if it fails because the same key landed meanwhile, the first result is returned.
 */
export async function onceByKey<T extends object>(store: IdempotencyKeys, call: KeyedCall | undefined, act: (key: ((result: T) => IdempotencyWrite) | undefined) => Promise<Replayable<T>>): Promise<Replayable<T>> {
  if (!call) return act(undefined);
  const first = await recorded<T>(store, call);
  if (first !== undefined) return { ...first, already: true };
  try {
    return await act((result) => writeOf(store, call, result));
  } catch (e) {
    // A concurrent call with the same key may have won: its result is this call's too.
    const won = await recorded<T>(store, call);
    if (won !== undefined) return { ...won, already: true };
    throw e;
  }
}
