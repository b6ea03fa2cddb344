/**
 * Postgres holds no U+0000: not in a text column, and not in jsonb, which every commit's units and
 * the step fast path's event data pass through. One NUL in one value (a thrown error's message in
 * an event, a tool's or model's text, who approved) failed the whole commit, again on every
 * retry, and a worker's run never moved. Payloads are JSON text already (JSON escapes a NUL), so
 * what can hold one is the rest: event data, reasons, names, who. There a NUL is stored as U+FFFD,
 * the character that stands for one that cannot be represented.
 */
import type { EventWrite, Unit } from "../types.js";

const NUL = "\u0000";
const REPLACEMENT = "\uFFFD";

/** Plain objects and arrays are walked; bytes and other objects are not text, and are left as they are. */
const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !ArrayBuffer.isView(v);

function holdsNul(v: unknown): boolean {
  if (typeof v === "string") return v.includes(NUL);
  if (Array.isArray(v)) return v.some(holdsNul);
  // Checked on every commit: a walk that allocates nothing.
  if (isRecord(v)) for (const k in v) if (Object.hasOwn(v, k) && (k.includes(NUL) || holdsNul(v[k]))) return true;
  return false;
}

function replaced(v: unknown): unknown {
  if (typeof v === "string") return v.replaceAll(NUL, REPLACEMENT);
  if (Array.isArray(v)) return v.map(replaced);
  if (isRecord(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k.replaceAll(NUL, REPLACEMENT), replaced(x)]));
  return v;
}

/** `value` as Postgres can hold it: `value` itself when it holds no NUL (the caller's objects are never changed). */
function storable<T>(value: T): T {
  return holdsNul(value) ? (replaced(value) as T) : value;
}

export const storableUnits = (units: Unit[]): Unit[] => storable(units);
export const storableEvents = (events: EventWrite[]): EventWrite[] => storable(events);
