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

/** Each row type's encrypted columns, for opening what a read returned. */
export type Opener = <T extends string | null>(value: T, aad: string) => T;

export function openRun(o: Opener, r: RunRow): RunRow {
  return { ...r, input: o(r.input, at.run(r.id, "input")), output: o(r.output, at.run(r.id, "output")), error: o(r.error, at.run(r.id, "error")) };
}

export function openStep(o: Opener, s: StepRow): StepRow {
  return { ...s, output: o(s.output, at.step(s.runId, s.seq, "output")), error: o(s.error, at.step(s.runId, s.seq, "error")), checkpoint: o(s.checkpoint, at.step(s.runId, s.seq, "checkpoint")) };
}

export function openWait(o: Opener, w: WaitRow): WaitRow {
  return { ...w, request: o(w.request, at.waitRequest(w.runId, w.name)), result: o(w.result, at.step(w.runId, w.seq, "output")) };
}

export function openHold(o: Opener, h: HoldRow): HoldRow {
  return { ...h, reason: o(h.reason, at.hold(h.runId, h.kind, h.seq, "reason")), details: o(h.details, at.hold(h.runId, h.kind, h.seq, "details")) };
}

export function openSnapshot(o: Opener, s: SnapshotRow): SnapshotRow {
  return { ...s, notes: o(s.notes, at.snapshot(s.runId, s.seq, s.source, "notes")), checkpoint: o(s.checkpoint, at.snapshot(s.runId, s.seq, s.source, "checkpoint")) };
}

/** Event data keeps `step` and `attempt` in the clear beside `$sealed`: the store deletes a step attempt's live text by them. */
export const SEALED_FIELD = "$sealed";
export const CLEAR_EVENT_FIELDS = ["step", "attempt"] as const;

export function openEvent(o: Opener, e: EventRow): EventRow {
  if (!e.data.includes(`"${SEALED_FIELD}"`)) return e;
  const data = JSON.parse(e.data) as Record<string, unknown>;
  const sealed = data[SEALED_FIELD];
  if (typeof sealed !== "string") return e;
  return { ...e, data: o(sealed, at.event(e.runId, e.type)) };
}
