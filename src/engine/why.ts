import type { HoldRow, RunRow, StepRow, WaitRow } from "../store/types.js";
import { formatDuration } from "./durations.js";
import { HOLD_CHOICES, storageSince } from "./holds.js";
import { decodeError } from "./payload.js";


export interface WayOut {
  what: string;
  command: string;
}

export interface Explanation {
  runId: string;
  status: string;
  /** One paragraph: where the run is, why, and what happens next. */
  text: string;
  /** Each way forward with the exact command for it. */
  commands: WayOut[];
}

const q = (s: string) => (/^[A-Za-z0-9_.:/@=-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

function workerCommand(run: RunRow): string {
  return run.module ? `stead worker ${q(run.module)}` : `stead worker <file exporting ${run.definition}>`;
}

function lastStep(journal: StepRow[]): string {
  const steps = journal.filter((s) => s.kind !== "now" && s.kind !== "random");
  const done = steps.filter((s) => s.status === "completed" || s.status === "failed");
  const last = done[done.length - 1];
  return last ? `its last completed step is "${last.stepId}" (${done.length} of ${steps.length} journaled)` : "no step has completed yet";
}

/** `ownerGone`: the lease's owner process is known to be dead (same host, checked by the caller). */
export function explain(run: RunRow, journal: StepRow[], waits: WaitRow[], holds: HoldRow[], now = Date.now(), ownerGone = false): Explanation {
  const id = q(run.id);
  const commands: WayOut[] = [];
  const since = formatDuration(now - run.updatedAt);
  let text: string;
  switch (run.status) {
    case "pending":
      text = `Run ${run.id} (${run.definition}) is ready and waiting for a worker that has the definition "${run.definition}"; ${lastStep(journal)}. Any running worker for it claims the run within its poll interval.`;
      commands.push({ what: "start a worker", command: workerCommand(run) });
      break;
    case "running": {
      if (ownerGone) {
        text = `Run ${run.id} (${run.definition}) was running on worker ${run.leaseOwner ?? "?"} (pid ${run.ownerPid ?? "?"}), but that process is gone; ${lastStep(journal)}. Any worker for "${run.definition}" on this host takes it over at once and resumes it at its last completed step.`;
        commands.push({ what: "start a worker", command: workerCommand(run) });
        break;
      }
      const left = run.leaseExpiresAt === null ? "" : run.leaseExpiresAt > now ? `, lease renewed until ${formatDuration(run.leaseExpiresAt - now)} from now` : ", its lease has expired and any worker may take it over";
      text = `Run ${run.id} (${run.definition}) is running on worker ${run.leaseOwner ?? "?"} (host ${run.ownerHost ?? "?"}, pid ${run.ownerPid ?? "?"}, claim #${run.fence}${left}); ${lastStep(journal)}.${run.pauseRequested ? " A pause was requested: it parks after its current step." : ""}`;
      commands.push({ what: "follow it", command: `stead logs ${id} -f` }, { what: "pause it after the current step", command: `stead pause ${id}` });
      break;
    }
    case "waiting": {
      const open = waits.filter((w) => w.status === "open");
      const parts = open.map((w) => {
        const n = q(w.name);
        switch (w.kind) {
          case "approval": {
            commands.push({ what: `approve "${w.name}"`, command: `stead approve ${id} ${n}` }, { what: `deny "${w.name}"`, command: `stead deny ${id} ${n} --reason "..."` });
            const call = toolCall(w.request);
            if (call) {
              commands.push(
                { what: "approve it with edited arguments", command: `stead approve ${id} ${n} --edit '<json>'` },
                { what: `approve ${call.tool} for the rest of the run`, command: `stead approve ${id} ${n} --scope run` },
              );
              return `approval of tool call ${call.tool}(${JSON.stringify(call.input).slice(0, 300)}) [call ${call.toolCallId}, fingerprint ${call.fingerprint}], asked ${formatDuration(now - w.createdAt)} ago`;
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
            commands.push({ what: `send signal "${w.name}"`, command: `stead signal ${id} ${n} '<json>'` });
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
            if (child) commands.push({ what: `inspect child ${child}`, command: `stead why ${q(child)}` });
            return `child run ${child || w.name} to end`;
          }
        }
        return `${String(w.kind)} "${w.name}"`;
      });
      text = `Run ${run.id} (${run.definition}) is parked with no process, waiting for ${parts.join(" and ") || "an answer"}; ${lastStep(journal)}. An answer makes it runnable and any worker for "${run.definition}" resumes it by itself.`;
      if (open.some((w) => w.kind === "timer" || w.kind === "quota" || w.kind === "child")) commands.push({ what: "make sure a worker runs", command: workerCommand(run) });
      commands.push({ what: "cancel it", command: `stead cancel ${id}` });
      break;
    }
    case "held": {
      const open = holds.filter((h) => h.status === "open");
      const storage = open.find((h) => h.kind === "storage");
      if (storage && open.length === 1) {
        const at = storageSince(storage.details) ?? storage.createdAt;
        text = `Run ${run.id} (${run.definition}) is on hold: storage full since ${new Date(at).toISOString()} (${formatDuration(now - at)} ago): ${storageError(storage.details)}. It continues by itself once space returns: any worker for "${run.definition}" probes the store, and claims pause until then; ${lastStep(journal)}.`;
        commands.push(
          { what: "free space where the store lives (or raise its size limit); nothing else is needed", command: workerCommand(run) },
          { what: "resume it now, once space is back (refused while the store is still full)", command: `stead release ${id} storage --choice retry` },
          { what: "cancel it", command: `stead cancel ${id}` },
        );
        break;
      }
      const parts = open.map((h) => {
        const ref = q(h.kind);
        for (const c of HOLD_CHOICES[h.kind]) {
          const extra = c.choice === "result" ? " --result '<json>'" : "";
          commands.push({ what: c.effect, command: `stead release ${id} ${ref} --choice ${c.choice}${extra}` });
        }
        if (h.kind === "definition_changed") commands.push({ what: "run it again from its journal under the new code, as a new run", command: `stead fork ${id}` });
        if (h.kind === "nondeterminism") commands.push({ what: "keep the journal up to the divergence in a new run under the new code", command: `stead fork ${id}` });
        return `${h.kind}: ${h.reason}`;
      });
      text = `Run ${run.id} (${run.definition}) is on hold since ${since} ago because ${parts.join("; ") || "of an unknown reason"}. Only a person releases it; ${lastStep(journal)}.`;
      commands.push({ what: "cancel it", command: `stead cancel ${id}` });
      break;
    }
    case "paused":
      text = `Run ${run.id} (${run.definition}) was paused ${since} ago; ${lastStep(journal)}. It stays parked until resumed.`;
      commands.push({ what: "resume it", command: `stead resume ${id}` }, { what: "cancel it", command: `stead cancel ${id}` });
      break;
    case "completed":
      text = `Run ${run.id} (${run.definition}) completed ${since} ago after ${journal.length} journal entries.`;
      commands.push({ what: "see its output", command: `stead status ${id}` });
      break;
    case "failed": {
      const e = decodeError(run.error);
      text = `Run ${run.id} (${run.definition}) failed ${since} ago: ${e.code ? `${e.code}: ` : ""}${e.message}; ${lastStep(journal)}.${e.fix ? ` What to check: ${e.fix}` : ""}`;
      commands.push(
        { what: `give ${e.stepId ? `step "${e.stepId}"` : "its failed step"} a new attempt once its cause is fixed`, command: `stead retry ${id}` },
        { what: "rerun it under the current code, reusing completed steps", command: `stead fork ${id}` },
      );
      break;
    }
    case "cancelled":
      text = `Run ${run.id} (${run.definition}) was cancelled ${since} ago; ${lastStep(journal)}. Nothing was deleted: it can be resumed.`;
      commands.push(
        { what: "resume it from its last completed step (with the children cancelled with it)", command: `stead resume ${id}` },
        { what: "run it again from its journal as a new run", command: `stead fork ${id}` },
      );
      break;
  }
  return { runId: run.id, status: run.status, text, commands };
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
