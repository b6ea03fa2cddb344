import type { HoldRow, RunRow, StepRow, WaitRow } from "../../store/types.js";
import { formatDuration } from "../durations.js";
import { HOLD_CHOICES, storageSince } from "./holds.js";
import { bytesText, storageSpace, type StorageSpace } from "./storage-space.js";
import { decodeError } from "../payload.js";
import type { Explanation, PlainCall, WayOut } from "../../client/api-types.js";
import { requestKindOf } from "./waits.js";

export type { WayOut } from "./ways-out.js";

export type { Explanation } from "../../client/api-types.js";

const call = (what: string, verb: PlainCall["verb"], runId: string): PlainCall => ({ what, verb, runId, args: {}, supply: [] });

function startWorker(what: string, run: RunRow): WayOut {
  return { what, verb: "worker", runId: run.id, args: { definition: run.definition, module: run.module }, supply: [] };
}

function lastStep(journal: StepRow[]): string {
  const steps = journal.filter((s) => s.kind !== "now" && s.kind !== "random");
  const done = steps.filter((s) => s.status === "completed" || s.status === "failed");
  const last = done[done.length - 1];
  return last ? `its last completed step is "${last.stepId}" (${done.length} of ${steps.length} journaled)` : "no step has completed yet";
}

/** `ownerGone`: the lease's owner process is known to be dead (same host, checked by the caller). */
export function explain(run: RunRow, journal: StepRow[], waits: WaitRow[], holds: HoldRow[], now = Date.now(), ownerGone = false): Explanation {
  const id = run.id;
  const ways: WayOut[] = [];
  const since = formatDuration(now - run.updatedAt);
  let text: string;
  switch (run.status) {
    case "pending":
      text = `Run ${run.id} (${run.definition}) is ready and waiting for a worker that has the definition "${run.definition}"; ${lastStep(journal)}. Any running worker for it claims the run within its poll interval.`;
      ways.push(startWorker("start a worker", run));
      break;
    case "running": {
      if (ownerGone) {
        text = `Run ${run.id} (${run.definition}) was running on worker ${run.leaseOwner ?? "?"} (pid ${run.ownerPid ?? "?"}), but that process is gone; ${lastStep(journal)}. Any worker for "${run.definition}" on this host takes it over at once and resumes it at its last completed step.`;
        ways.push(startWorker("start a worker", run));
        break;
      }
      const left = run.leaseExpiresAt === null ? "" : run.leaseExpiresAt > now ? `, lease renewed until ${formatDuration(run.leaseExpiresAt - now)} from now` : ", its lease has expired and any worker may take it over";
      text = `Run ${run.id} (${run.definition}) is running on worker ${run.leaseOwner ?? "?"} (host ${run.ownerHost ?? "?"}, pid ${run.ownerPid ?? "?"}, claim #${run.fence}${left}); ${lastStep(journal)}.${run.pauseRequested ? " A pause was requested: it parks after its current step." : ""}`;
      ways.push({ what: "follow it", verb: "events", runId: id, args: { follow: true }, supply: [] }, call("pause it after the current step", "pause", id));
      break;
    }
    case "waiting": {
      const open = waits.filter((w) => w.status === "open");
      const parts = open.map((w) => {
        const wait = w.name;
        switch (w.kind) {
          case "approval": {
            ways.push(
              { what: `approve "${w.name}"`, verb: "approve", runId: id, args: { wait }, supply: [] },
              { what: `deny "${w.name}"`, verb: "deny", runId: id, args: { wait }, supply: ["reason"] },
            );
            const tc = requestKindOf(w) === "tool-call" ? toolCall(w.request) : null;
            if (tc) {
              ways.push(
                { what: "approve it with edited arguments", verb: "approve", runId: id, args: { wait }, supply: ["input"] },
                { what: `approve ${tc.tool} for the rest of the run`, verb: "approve", runId: id, args: { wait, scope: "run" }, supply: [] },
              );
              return `approval of tool call ${tc.tool}(${JSON.stringify(tc.input).slice(0, 300)}) [call ${tc.toolCallId}, fingerprint ${tc.fingerprint}], asked ${formatDuration(now - w.createdAt)} ago`;
            }
            return `approval "${w.name}"${w.request ? ` (request: ${w.request.slice(0, 200)})` : ""}, asked ${formatDuration(now - w.createdAt)} ago`;
          }
          case "quota": {
            const due = (w.wakeAt ?? now) - now;
            let model = "";
            try {
              model = (JSON.parse(w.request ?? "{}") as { model?: string }).model ?? "";
            } catch {
              model = "";
            }
            const at = new Date(w.wakeAt ?? now).toISOString();
            return `the provider's quota${model ? ` for ${model}` : ""} to reset: parked with no process and no retry spent, ${due > 0 ? `reset in ${formatDuration(due)} (at ${at})` : `reset was due at ${at}: the next worker sweep wakes it`}`;
          }
          case "signal":
            ways.push({ what: `send signal "${w.name}"`, verb: "signal", runId: id, args: { name: wait }, supply: ["payload"] });
            return `signal "${w.name}", waiting ${formatDuration(now - w.createdAt)}`;
          case "timer": {
            const due = (w.wakeAt ?? now) - now;
            return due > 0 ? `timer "${w.name}", due in ${formatDuration(due)} (at ${new Date(w.wakeAt ?? now).toISOString()})` : `timer "${w.name}", due now: the next worker sweep wakes it`;
          }
          case "child": {
            let child = "";
            try {
              child = (JSON.parse(w.request ?? "{}") as { child?: string }).child ?? "";
            } catch {
              child = "";
            }
            if (child) ways.push(call(`inspect child ${child}`, "why", child));
            return `child run ${child || w.name} to end`;
          }
        }
        return `${String(w.kind)} "${w.name}"`;
      });
      text = `Run ${run.id} (${run.definition}) is parked with no process, waiting for ${parts.join(" and ") || "an answer"}; ${lastStep(journal)}. An answer makes it runnable and any worker for "${run.definition}" resumes it by itself.`;
      if (open.some((w) => w.kind === "timer" || w.kind === "quota" || w.kind === "child")) ways.push(startWorker("make sure a worker runs", run));
      ways.push(call("cancel it", "cancel", id));
      break;
    }
    case "held": {
      const open = holds.filter((h) => h.status === "open");
      const storage = open.find((h) => h.kind === "storage");
      if (storage && open.length === 1) {
        const at = storageSince(storage.details) ?? storage.createdAt;
        text = `Run ${run.id} (${run.definition}) is on hold: storage full since ${new Date(at).toISOString()} (${formatDuration(now - at)} ago): ${storageError(storage.details)}. It continues by itself once space returns${spaceNeeded(storageSpace(storage.details))}: any worker for "${run.definition}" probes the store, and claims pause until then; ${lastStep(journal)}.`;
        ways.push(
          startWorker("free space where the store lives (or raise its size limit); nothing else is needed", run),
          { what: "resume it now, once space is back (refused while the store is still full)", verb: "release", runId: id, args: { hold: "storage", choice: "retry" }, supply: [] },
          call("cancel it", "cancel", id),
        );
        break;
      }
      const parts = open.map((h) => {
        for (const c of HOLD_CHOICES[h.kind]) {
          ways.push({ what: c.effect, verb: "release", runId: id, args: { hold: h.kind, choice: c.choice }, supply: c.choice === "result" ? ["result"] : [] });
        }
        if (h.kind === "definition_changed") ways.push(call("run it again from its journal under the new code, as a new run", "fork", id));
        if (h.kind === "nondeterminism") ways.push(call("keep the journal up to the divergence in a new run under the new code", "fork", id));
        return `${h.kind}: ${h.reason}`;
      });
      text = `Run ${run.id} (${run.definition}) is on hold since ${since} ago because ${parts.join("; ") || "of an unknown reason"}. Only a person releases it; ${lastStep(journal)}.`;
      ways.push(call("cancel it", "cancel", id));
      break;
    }
    case "paused":
      text = `Run ${run.id} (${run.definition}) was paused ${since} ago; ${lastStep(journal)}. It stays parked until resumed.`;
      ways.push(call("resume it", "resume", id), call("cancel it", "cancel", id));
      break;
    case "completed":
      text = `Run ${run.id} (${run.definition}) completed ${since} ago after ${journal.length} journal entries.`;
      ways.push(call("see its output", "get", id));
      break;
    case "failed": {
      const e = decodeError(run.error);
      text = `Run ${run.id} (${run.definition}) failed ${since} ago: ${e.code ? `${e.code}: ` : ""}${e.message}; ${lastStep(journal)}.${e.fix ? ` What to check: ${e.fix}` : ""}`;
      ways.push(
        call(`give ${e.stepId ? `step "${e.stepId}"` : "its failed step"} a new attempt once its cause is fixed`, "retry", id),
        call("rerun it under the current code, reusing completed steps", "fork", id),
      );
      break;
    }
    case "cancelled":
      text = `Run ${run.id} (${run.definition}) was cancelled ${since} ago; ${lastStep(journal)}. Nothing was deleted: it can be resumed.`;
      ways.push(
        call("resume it from its last completed step (with the children cancelled with it)", "resume", id),
        call("run it again from its journal as a new run", "fork", id),
      );
      break;
  }
  return { runId: run.id, status: run.status, text, waysOut: ways };
}

/** What a storage hold waits for, as a clause of `why` (nothing for a hold written before holds recorded it). */
function spaceNeeded(s: StorageSpace | undefined): string {
  if (!s) return "";
  if (s.freeBytes === null) return `, when a probe write of ${bytesText(s.needBytes)} succeeds (the database server's free space cannot be told from here)`;
  return `, when ${bytesText(s.needBytes)} are free (the worker's headroom and the store's reserve); ${bytesText(s.freeBytes)} were free when it was held`;
}

function storageError(details: string): string {
  try {
    const e = (JSON.parse(details) as { error?: unknown }).error;
    return typeof e === "string" ? e : "the store could not write";
  } catch {
    return "the store could not write";
  }
}

function toolCall(request: string | null): { tool: string; toolCallId: string; input: unknown; fingerprint: string } | null {
  try {
    const r = JSON.parse(request ?? "null") as Record<string, unknown> | null;
    if (r && typeof r.tool === "string" && typeof r.toolCallId === "string" && typeof r.fingerprint === "string") {
      return { tool: r.tool, toolCallId: r.toolCallId, input: r.input, fingerprint: r.fingerprint };
    }
  } catch {
    return null;
  }
  return null;
}
