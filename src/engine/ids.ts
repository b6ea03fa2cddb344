import { createHash, randomBytes } from "node:crypto";

const SAFE = /^[A-Za-z0-9_-]{1,64}$/;

/** A new run id: time-ordered prefix (sorts by creation) and 48 random bits. */
export function newRunId(): string {
  return `run_${Date.now().toString(36)}${randomBytes(6).toString("hex")}`;
}

/** Deterministic, so replaying the parent never creates a second child. */
export function childRunId(parentId: string, stepId: string): string {
  const part = SAFE.test(stepId) ? stepId : createHash("sha256").update(stepId).digest("hex").slice(0, 12);
  return `${parentId}.${part}`;
}

export function isValidRunId(id: string): boolean {
  return /^[A-Za-z0-9_.:-]{1,200}$/.test(id);
}

/**
 * An id as a message shows it: whole when short and printable, else quoted, cut, and with its
 * length (ids come from users and may be anything, of any size).
 */
export function showId(id: string, max = 80): string {
  if (id.length <= max && /^[\x21-\x7e]+$/.test(id)) return id;
  const cut = id.length <= max ? id : id.slice(0, max);
  return `${JSON.stringify(cut)}${id.length > max ? `… (${id.length} characters)` : ""}`;
}
