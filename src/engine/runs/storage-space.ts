/**
 * The room a `storage` hold waits for: the bytes a probe must find (the worker's headroom and the
 * reserve the store sets aside again) and the bytes it found free, as the hold's details, the
 * `storage.full` event and the worker's report record them. On a volume smaller than the need,
 * the hold never clears by itself: saying both numbers is how a person can tell.
 */
import { formatBytes } from "../byte-sizes.js";

export interface StorageSpace {
  needBytes: number;
  /** Null where the store cannot tell without writing (Postgres: the server's disk). */
  freeBytes: number | null;
}

/** The space a hold's details (JSON text or parsed) record; undefined for a hold written before they did. */
export function storageSpace(details: string | Record<string, unknown>): StorageSpace | undefined {
  let d: unknown;
  try {
    d = typeof details === "string" ? JSON.parse(details) : details;
  } catch {
    return undefined;
  }
  const { needBytes, freeBytes } = (d ?? {}) as { needBytes?: unknown; freeBytes?: unknown };
  if (typeof needBytes !== "number") return undefined;
  return { needBytes, freeBytes: typeof freeBytes === "number" ? freeBytes : null };
}

/** "320.0 KB (327680 bytes)". */
export const bytesText = (n: number): string => `${formatBytes(n)} (${n} bytes)`;

/** One clause for a listing: "needs 320.0 KB free, 12.0 KB free" (or "free space unknown"). */
export function spaceClause(s: StorageSpace): string {
  return `needs ${formatBytes(s.needBytes)} free, ${s.freeBytes === null ? "free space unknown" : `${formatBytes(s.freeBytes)} free`}`;
}
