import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import type { Owner } from "../store/types.js";

/**
 * A process's start time as the OS reports it. On Linux: field 22 of /proc/<pid>/stat (clock ticks
 * since boot), exact and stable, so a reused pid is never mistaken for the original process.
 * Elsewhere: undefined for other processes (liveness then falls back to lease expiry).
 */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may contain spaces and parentheses: parse after its last ')'.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = rest[19];
    return ticks ? `proc:${ticks}` : undefined;
  } catch {
    return undefined;
  }
}

let self: Owner | undefined;

/**
 * This process's identity. STEAD_HOST overrides the host name: set it where several machines share
 * one (containers with a fixed hostname), since same-host owners are judged by their pid.
 */
export function currentProcessOwner(): Omit<Owner, "workerId"> {
  const start = processStartTime(process.pid) ?? `boot:${Math.round(Date.now() - process.uptime() * 1000)}`;
  return { host: process.env.STEAD_HOST || hostname(), pid: process.pid, start };
}

export function newOwner(): Owner {
  const base = (self ??= { ...currentProcessOwner(), workerId: "" });
  return { ...base, workerId: `${base.host}:${base.pid}:${randomBytes(4).toString("hex")}` };
}

/**
 * Whether the process that took a lease is certainly gone. Only answers for this host; a pid that
 * exists with a different start time is a reused pid, so the owner is gone.
 */
export function ownerIsDead(owner: { host: string | null; pid: number | null; start: string | null }): boolean {
  const me = currentProcessOwner();
  if (owner.host !== me.host || owner.pid === null || owner.start === null) return false;
  if (!owner.start.startsWith("proc:")) return false;
  const now = processStartTime(owner.pid);
  return now === undefined || now !== owner.start;
}
