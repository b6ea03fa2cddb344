/**
 * Faults every store reports the same way, so the worker can tell them from a bug: a store that
 * is gone (its file deleted or replaced under the process) and a store that cannot write for lack
 * of space. Both are SteadErrors with a stable code; the worker reacts to the code, not the dialect.
 */
import { SteadError } from "../errors.js";

export function storeLost(location: string, what: string): SteadError {
  return new SteadError("STEAD_STORE_LOST", `the store ${location} ${what} while this process had it open: writes since then would be lost`, {
    fix: "nothing this process did after that is recorded or shown; restore the store (from a backup, or point --store at the new one), then start again what had it open (`stead serve`, `stead worker`)",
  });
}

export function storageFull(location: string, cause: unknown): SteadError {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new SteadError("STEAD_STORAGE_FULL", `the store ${location} cannot write: no space left (${detail})`, {
    fix: "free space where the store lives (or raise its size limit); runs continue by themselves once space returns",
    cause,
  });
}

const code = (e: unknown): unknown => (e as { code?: unknown } | null)?.code;

export const isStorageFull = (e: unknown): boolean => code(e) === "STEAD_STORAGE_FULL";
export const isStoreLost = (e: unknown): boolean => code(e) === "STEAD_STORE_LOST";

/** The room a full store must have again before its runs continue, unless a worker says otherwise. */
export const DEFAULT_HEADROOM_BYTES = 8 * 1024 * 1024;

/** What a store can tell about its room to write (see Store.checkStorage). */
export interface StorageCheck {
  /** Whether a write of the asked size should succeed now. */
  ok: boolean;
  /** Bytes the store may still grow by, when it can tell without writing; null when it cannot. */
  freeBytes: number | null;
  /**
   * The bytes `ok` waited for: the size asked, plus what the store must set aside again (its
   * reserve), or its probe's least size. Absent: the size asked.
   */
  needBytes?: number;
  /** One line for people: what was measured (a file system, a page limit, a probe write). */
  detail: string;
}

/** The store found an idempotency key recorded already (a concurrent call with the same key). */
export function keyTaken(verb: string, scope: string, key: string): SteadError {
  return new SteadError("STEAD_IDEMPOTENCY_CONFLICT", `idempotency key ${JSON.stringify(key)} of ${verb} ${scope} is recorded already`, {
    fix: "read the first call's result with the same key, or use a new key for a new command",
  });
}

/** The store found a token that is not revoked under the name a new one asked for. */
export function tokenNameTaken(name: string): SteadError {
  return new SteadError("STEAD_ID_TAKEN", `a token named ${JSON.stringify(name)} exists and is not revoked`, {
    token: name,
    fix: `choose another name, or revoke that token first (stead tokens revoke ${name})`,
  });
}

/** A data key to re-wrap is not in the store (it was never there: re-wrapping replaces, never adds). */
export function missingDataKey(id: string): SteadError {
  return new SteadError("STEAD_KEY_MISSING", `the store has no data key ${JSON.stringify(id)} to re-wrap; nothing was changed`, {
    fix: "read the store's keys again (stead keys status) and re-wrap those",
  });
}
