/**
 * Where each encrypted value lives, as the authenticated data it is sealed with: table, row key,
 * column. A value opened under another name fails, so rows and columns cannot be swapped.
 *
 * Two bindings are not a row's own key, because the store writes or copies them itself:
 * - a wait's result is bound as its journal step's output (`steps|run|seq|output`): resolving a
 *   wait copies the result into that step, so both places hold one sealed value;
 * - an event is bound to its run and type (its number is the store's, taken at commit).
 */
import type { EventRow, HoldRow, RunRow, SnapshotRow, StepRow, WaitRow } from "../types.js";

export const at = {
  run: (id: string, column: "input" | "output" | "error") => `runs|${id}|${column}`,
  step: (runId: string, seq: number, column: "output" | "error" | "checkpoint") => `steps|${runId}|${seq}|${column}`,
  waitRequest: (runId: string, name: string) => `waits|${runId}|${name}|request`,
  hold: (runId: string, kind: string, seq: number | null | undefined, column: "reason" | "details") => `holds|${runId}|${kind}|${seq ?? ""}|${column}`,
  event: (runId: string, type: string) => `events|${runId}|${type}`,
  idempotency: (verb: string, scope: string, key: string, column: "summary" | "result") => `idempotency_keys|${verb}|${scope}|${key}|${column}`,
  snapshot: (runId: string, seq: number, source: string, column: "notes" | "checkpoint") => `snapshots|${runId}|${seq}|${source}|${column}`,
  blob: (address: string) => `blobs|${address}`,
};

/**
 * Each row type's encrypted columns, for opening what a read returned. An opener returns the value
 * it was given when there is nothing to open (a plain store's check): the row is then returned
 * as it is, not copied.
 */
export type Opener = <T extends string | null>(value: T, aad: string) => T;

export function openRun(o: Opener, r: RunRow): RunRow {
  const input = o(r.input, at.run(r.id, "input"));
  const output = o(r.output, at.run(r.id, "output"));
  const error = o(r.error, at.run(r.id, "error"));
  return input === r.input && output === r.output && error === r.error ? r : { ...r, input, output, error };
}

export function openStep(o: Opener, s: StepRow): StepRow {
  const output = o(s.output, at.step(s.runId, s.seq, "output"));
  const error = o(s.error, at.step(s.runId, s.seq, "error"));
  const checkpoint = o(s.checkpoint, at.step(s.runId, s.seq, "checkpoint"));
  return output === s.output && error === s.error && checkpoint === s.checkpoint ? s : { ...s, output, error, checkpoint };
}

export function openWait(o: Opener, w: WaitRow): WaitRow {
  const request = o(w.request, at.waitRequest(w.runId, w.name));
  const result = o(w.result, at.step(w.runId, w.seq, "output"));
  return request === w.request && result === w.result ? w : { ...w, request, result };
}

export function openHold(o: Opener, h: HoldRow): HoldRow {
  const reason = o(h.reason, at.hold(h.runId, h.kind, h.seq, "reason"));
  const details = o(h.details, at.hold(h.runId, h.kind, h.seq, "details"));
  return reason === h.reason && details === h.details ? h : { ...h, reason, details };
}

export function openSnapshot(o: Opener, s: SnapshotRow): SnapshotRow {
  const notes = o(s.notes, at.snapshot(s.runId, s.seq, s.source, "notes"));
  const checkpoint = o(s.checkpoint, at.snapshot(s.runId, s.seq, s.source, "checkpoint"));
  return notes === s.notes && checkpoint === s.checkpoint ? s : { ...s, notes, checkpoint };
}

/** Event data keeps `step` and `attempt` in the clear beside `$sealed`: the store deletes a step attempt's live text by them. */
export const SEALED_FIELD = "$sealed";
export const CLEAR_EVENT_FIELDS = ["step", "attempt"] as const;

/**
 * Events whose data is only what the steps table keeps in the clear anyway (a step's id, seq,
 * attempt and time), stored as they are: one seal less per step, and nothing more to read.
 * Any other field, or a string where a number belongs, and the event is sealed as every other.
 */
const CLEAR_EVENTS: Readonly<Record<string, Readonly<Record<string, "string" | "number">>>> = {
  "step.completed": { step: "string", seq: "number", attempt: "number", ms: "number" },
};

/**
 * Events the store writes itself, below this layer, with the fields each may hold: plain, and
 * nothing of a payload (claims, expired leases, a pruned run's summary).
 */
const STORE_EVENTS: Readonly<Record<string, ReadonlySet<string>>> = {
  "run.claimed": new Set(["worker", "host", "pid", "fence", "previousStatus"]),
  "lease.expired": new Set(["fence", "reason"]),
  "run.pruned": new Set(["by", "endedBefore", "summary"]),
};

export function isClearEvent(type: string, data: Record<string, unknown> | undefined): boolean {
  const fields = Object.hasOwn(CLEAR_EVENTS, type) ? CLEAR_EVENTS[type] : undefined;
  if (!fields || !data) return false;
  for (const k in data) if (!Object.hasOwn(fields, k) || typeof data[k] !== fields[k]) return false;
  return true;
}

function isStoreEvent(type: string, data: Record<string, unknown>): boolean {
  const fields = Object.hasOwn(STORE_EVENTS, type) ? STORE_EVENTS[type] : undefined;
  if (!fields) return false;
  for (const k in data) if (!fields.has(k)) return false;
  return true;
}

/**
 * `notSealed`: the failure for event data that this layer would have sealed yet is not (plain
 * data other than a store event's or a clear step completion's shape, or a malformed seal).
 */
export function openEvent(o: Opener, e: EventRow, notSealed: (aad: string) => Error): EventRow {
  let data: unknown;
  try {
    data = JSON.parse(e.data);
  } catch {
    data = undefined;
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) throw notSealed(`events|${e.runId}/${e.seq}|data`);
  const fields = data as Record<string, unknown>;
  if (!Object.hasOwn(fields, SEALED_FIELD)) {
    if (isStoreEvent(e.type, fields) || isClearEvent(e.type, fields)) return e;
    throw notSealed(`events|${e.runId}/${e.seq}|data`);
  }
  const sealed = fields[SEALED_FIELD];
  if (typeof sealed !== "string") throw notSealed(`events|${e.runId}/${e.seq}|data`);
  return { ...e, data: o(sealed, at.event(e.runId, e.type)) };
}

/**
 * Event data read from a store with no keys: returned as it is, unless it is sealed (a `$sealed`
 * field at its top), which `sealed` turns into the failure naming the row and the key.
 */
export function plainEvent(e: EventRow, sealed: (aad: string, value: string) => Error): EventRow {
  // Only a `"$sealed"` key (or string) can mark sealed data: the text is parsed only when it holds one.
  if (!e.data.includes(`"${SEALED_FIELD}"`)) return e;
  let data: unknown;
  try {
    data = JSON.parse(e.data);
  } catch {
    return e;
  }
  if (typeof data !== "object" || data === null || Array.isArray(data) || !Object.hasOwn(data, SEALED_FIELD)) return e;
  const value = (data as Record<string, unknown>)[SEALED_FIELD];
  throw sealed(`events|${e.runId}/${e.seq}|data`, typeof value === "string" ? value : "");
}
