/**
 * Event data reaches Postgres as jsonb (the commit's JSON units, and the step fast path's casts),
 * and jsonb cannot hold U+0000: one NUL in one event failed the whole commit, again on every retry,
 * and the run never moved. Event data is the run's report, not its journal (a step's output and
 * error are JSON text in text columns and keep every character), so a NUL in it is stored as
 * U+FFFD, the character that stands for one that cannot be represented.
 */
import type { EventWrite, Mutation, Unit } from "../types.js";

const NUL = "\u0000";
const REPLACEMENT = "\uFFFD";

function holdsNul(v: unknown): boolean {
  if (typeof v === "string") return v.includes(NUL);
  if (Array.isArray(v)) return v.some(holdsNul);
  if (v !== null && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) if (k.includes(NUL) || holdsNul(x)) return true;
  }
  return false;
}

function replaced(v: unknown): unknown {
  if (typeof v === "string") return v.replaceAll(NUL, REPLACEMENT);
  if (Array.isArray(v)) return v.map(replaced);
  if (v !== null && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k.replaceAll(NUL, REPLACEMENT), replaced(x)]));
  return v;
}

/** `events` as jsonb can hold them: the same array when none holds a NUL (the caller's objects are never changed). */
export function jsonbEvents(events: readonly EventWrite[]): readonly EventWrite[] {
  if (!events.some((e) => holdsNul(e.data) || e.type.includes(NUL))) return events;
  return events.map((e) => ({ ...e, type: e.type.replaceAll(NUL, REPLACEMENT), ...(e.data === undefined ? {} : { data: replaced(e.data) as Record<string, unknown> }) }));
}

/** `units` with every mutation's events as jsonb can hold them; the same array when nothing needed it. */
export function jsonbUnits(units: Unit[]): Unit[] {
  let changed = false;
  const out = units.map((u) =>
    u.map((m): Mutation => {
      if (!m.events) return m;
      const events = jsonbEvents(m.events);
      if (events === m.events) return m;
      changed = true;
      return { ...m, events: [...events] };
    }),
  );
  return changed ? out : units;
}
