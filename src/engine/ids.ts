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
