import { createHash } from "node:crypto";
import type { JSONSchema7 } from "@ai-sdk/provider";
import { canonical } from "../engine/canonical.js";

/** The decision record a tool approval wait is opened with (`stead why` and `stead approve` read it). */
export interface ToolApprovalRequest {
  tool: string;
  toolCallId: string;
  input: unknown;
  /** Binds a decision to this exact call: a different call (tool or arguments) needs its own decision. */
  fingerprint: string;
  /** Edited arguments are validated against it before the decision is accepted. */
  inputSchema: JSONSchema7;
}

/** What a tool approval wait resolves with. */
export interface ToolDecision {
  approved: boolean;
  by: string | null;
  reason: string | null;
  at: number;
  /** Replacement arguments (already valid against the tool's input schema). */
  input?: unknown;
  /** "run": also approve every later call of this tool in this run. Default "once". */
  scope?: "once" | "run";
  /** The fingerprint of the call the person decided on. */
  fingerprint?: string;
}

export function isToolApprovalRequest(v: unknown): v is ToolApprovalRequest {
  if (typeof v !== "object" || v === null) return false;
  const o = v as Record<string, unknown>;
  return typeof o.tool === "string" && typeof o.toolCallId === "string" && typeof o.fingerprint === "string" && typeof o.inputSchema === "object";
}

export function callFingerprint(tool: string, input: unknown): string {
  return createHash("sha256").update(JSON.stringify([tool, canonical(input)])).digest("hex").slice(0, 16);
}

