import { formatDuration } from "../engine/durations.js";
import { spaceClause } from "../engine/runs/storage-space.js";
import type { StorageReport } from "../worker/storage-guard.js";
import type { EventView, HoldView, StepView, WaitView } from "../engine/runs/views.js";
import { eventColour, visibleLength } from "./colour.js";

/** Left-aligned columns separated by two spaces; cells are made single-line. Colour sequences take no width. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const clean = (s: string) => s.replace(/\s+/g, " ");
  const all = [headers, ...rows].map((r) => r.map(clean));
  const widths = headers.map((_, i) => Math.max(...all.map((r) => visibleLength(r[i] ?? ""))));
  const pad = (c: string, w: number) => c + " ".repeat(Math.max(0, w - visibleLength(c)));
  return all
    .map((r) => r.map((c, i) => (i === r.length - 1 ? c : pad(c, widths[i] ?? 0))).join("  ").trimEnd())
    .join("\n");
}

/** "12s ago"; "-" for no time. */
export function age(at: number | null | undefined, now = Date.now()): string {
  return at === null || at === undefined ? "-" : `${formatDuration(Math.max(0, now - at))} ago`;
}

/** Local wall-clock time with milliseconds: 14:03:07.251. */
export function clock(at: number): string {
  const d = new Date(at);
  const p = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

export function truncate(s: string, max = 80): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

export function json(value: unknown): string {
  return value === undefined ? "undefined" : JSON.stringify(value);
}

export function waitLabel(w: Pick<WaitView, "kind" | "name" | "wakeAt">, now = Date.now()): string {
  if (w.kind === "timer" && w.wakeAt !== null) return `timer "${w.name}" (due in ${formatDuration(Math.max(0, w.wakeAt - now))})`;
  if (w.kind === "quota" && w.wakeAt !== null) return `quota reset (in ${formatDuration(Math.max(0, w.wakeAt - now))})`;
  return `${w.kind} "${w.name}"`;
}

export function holdLabel(h: Pick<HoldView, "kind" | "id">): string {
  return `hold ${h.kind} (#${h.id})`;
}

/** Journal entries that are bookkeeping (clock, randomness), not work. */
const BOOKKEEPING = new Set(["now", "random"]);

export function stepsDone(journal: readonly StepView[]): number {
  return journal.filter((s) => s.status === "completed" && !BOOKKEEPING.has(s.kind)).length;
}

export function stepDuration(s: StepView): string {
  return s.completedAt === null ? "-" : formatDuration(s.completedAt - s.startedAt);
}

const str = (v: unknown): string => (typeof v === "string" ? v : v === null || v === undefined ? "" : JSON.stringify(v));

/**
 * One line describing an event, without time or run id. `brief` leaves out bookkeeping events
 * (claims, fingerprints, run.waiting which repeats wait.opened) for a foreground run.
 */
export function describeEvent(e: EventView, brief = false): string | null {
  const d = e.data;
  switch (e.type) {
    case "run.created":
      return `created (${str(d.definition)}${d.forkedFrom ? `, forked from ${str(d.forkedFrom)} reusing ${str(d.reused)} entries` : ""})`;
    case "run.claimed":
      return brief ? null : `claimed by ${str(d.worker)} (pid ${str(d.pid)}, claim #${str(d.fence)}${d.previousStatus === "running" ? ", previous owner lost its lease" : ""})`;
    case "run.fingerprint_adopted":
      return brief ? null : `fingerprint ${str(d.fingerprint)} adopted`;
    case "step.completed":
      return `step "${str(d.step)}" completed in ${formatDuration(Number(d.ms ?? 0))}${Number(d.attempt ?? 1) > 1 ? ` (attempt ${str(d.attempt)})` : ""}`;
    case "step.failed":
      return `step "${str(d.step)}" failed after ${formatDuration(Number(d.ms ?? 0))} (attempt ${str(d.attempt)}): ${str(d.error)}`;
    case "step.intent":
      return `step "${str(d.step)}" intent recorded (effect, idempotency key ${str(d.idempotencyKey)})${d.because ? `: ${str(d.because)}` : ""}`;
    case "effect.reconciled":
      return `step "${str(d.step)}" reconciled: ${str(d.outcome)}`;
    case "wait.opened":
      return `waiting for ${str(d.kind)} "${str(d.wait)}"${typeof d.wakeAt === "number" ? ` until ${new Date(d.wakeAt).toISOString()}` : ""}`;
    case "run.waiting":
      return brief ? null : `parked (${str(d.kind)} "${str(d.wait)}")`;
    case "wait.resolved":
      return `${str(d.kind)} "${str(d.wait)}" resolved${d.child ? ` (child ${str(d.child)} ${str(d.status)})` : ""}`;
    case "approval.approved":
      return `approval "${str(d.wait)}" approved${d.by ? ` by ${str(d.by)}` : ""}${d.reason ? `: ${str(d.reason)}` : ""}`;
    case "approval.denied":
      return `approval "${str(d.wait)}" denied${d.by ? ` by ${str(d.by)}` : ""}${d.reason ? `: ${str(d.reason)}` : ""}`;
    case "signal.received":
      return `signal "${str(d.wait)}" received${d.by ? ` from ${str(d.by)}` : ""}`;
    case "run.runnable":
      return brief ? null : `runnable again (after "${str(d.after)}")`;
    case "child.started":
      return `child run ${str(d.child)} (${str(d.definition)}) started`;
    case "run.held":
      return `HELD ${str(d.hold)}${d.step ? ` at step "${str(d.step)}"` : ""}: ${str(d.reason)}`;
    case "hold.released":
      return `hold ${str(d.hold)} (#${str(d.id)}) released with "${str(d.choice)}"${d.by ? ` by ${str(d.by)}` : ""}`;
    case "run.released":
      return `handed back as pending (${str(d.reason)})`;
    case "run.pause_requested":
      return "pause requested";
    case "run.paused":
      return "paused";
    case "run.completed":
      return "completed";
    case "run.failed":
      return `FAILED: ${d.code ? `${str(d.code)}: ` : ""}${str(d.error)}${d.fix ? ` — ${str(d.fix)}` : ""}`;
    case "run.cancelled":
      return `cancelled${d.reason ? `: ${str(d.reason)}` : ""}${d.by ? ` by ${str(d.by)}` : ""}`;
    case "model.delta":
      return `${str(d.step)} (attempt ${str(d.attempt)}${Number(d.try ?? 1) > 1 ? `, try ${str(d.try)}` : ""}) » ${truncate(str(d.text).replace(/\s+/g, " "), 200)}`;
    case "model.text": {
      // Expanded by LiveText: the completed call's text, less what a follower already showed.
      const rest = typeof d.rest === "string" ? d.rest : str(d.text);
      return `${str(d.step)} (attempt ${str(d.attempt)}) answered${rest ? ` » ${truncate(rest.replace(/\s+/g, " "), 200)}` : ""}`;
    }
    case "model.retry":
      return `${str(d.step)}: ${str(d.model)} failed (${d.status ? `${str(d.status)} ` : ""}${truncate(str(d.error), 120)}); try ${Number(d.try ?? 0) + 1} in ${formatDuration(Number(d.delayMs ?? 0))}`;
    case "model.failover":
      return `${str(d.step)}: failing over from ${str(d.from)} to ${str(d.to)} (${truncate(str(d.reason), 120)})`;
    case "workspace.restored": {
      const n = (d.counts ?? {}) as { changed?: number; added?: number; removed?: number };
      const list = (k: "changed" | "added" | "removed") => (Array.isArray(d[k]) && (d[k] as unknown[]).length ? ` ${k}: ${(d[k] as unknown[]).map(str).join(", ")}` : "");
      return `workspace ${str(d.action)} at step "${str(d.step ?? "start")}"${n.changed || n.added || n.removed ? ` —${list("changed")}${list("added")}${list("removed")}` : ""}`;
    }
    case "workspace.gap":
      return `workspace gap at "${str(d.step ?? d.stepId ?? "?")}": ${d.reason ? str(d.reason) : `${str(d.count)} file(s) could not be read (${truncate(str(d.paths), 120)})`}`;
    case "run.resumed":
      if (Array.isArray(d.hooks)) return `resumed after restore hooks ${(d.hooks as { hook?: unknown; ms?: unknown }[]).map((h) => `${str(h.hook)} ${formatDuration(Number(h.ms ?? 0))}`).join(", ")}`;
      return "resumed";
    case "approval.stale":
      return `decision on "${str(d.wait)}" was for another call (fingerprint ${str(d.decided)}, call ${str(d.call)}); asking again`;
    case "run.forked":
      return `forked as ${str(d.fork)} (reusing ${str(d.reused)} entries)`;
    default:
      return brief ? null : `${e.type} ${truncate(JSON.stringify(d), 160)}`;
  }
}

/** One stderr line for a worker's report on the store's room to write. */
export function describeStorage(r: StorageReport, now = Date.now()): string {
  const since = `${new Date(r.since).toISOString()}`;
  switch (r.state) {
    case "full":
      return `storage full since ${since}: ${r.error}; claims paused, runs whose writes failed are handed back and continue by themselves when space returns`;
    case "still-full":
      return `storage still full since ${since} (${formatDuration(now - r.since)}): ${r.error}; ${r.heldRuns} run(s) wait for space: ${spaceClause(r)}`;
    case "recovered":
      return `storage recovered after ${formatDuration(r.at - r.since)} (${r.detail}): ${r.resumedRuns} run(s) continue`;
  }
}

/** `14:03:07.251  <run>  step.completed  step "fetch" completed in 120ms` */
export function eventLine(e: EventView, options: { runId?: boolean } = {}): string {
  const text = describeEvent(e) ?? e.type;
  return `${clock(e.at)}  ${options.runId ? `${e.runId}  ` : ""}${eventColour(e.type, e.type.padEnd(19))}  ${text}`;
}

/**
 * Text a model, a tool or a person wrote, made safe for a terminal: control characters (escape
 * sequences among them) are shown as `\xNN`, never sent. Newlines and tabs stay.
 */
export function printable(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}
