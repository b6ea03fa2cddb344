/**
 * What the approvals inbox reads: the open approvals across runs (`GET /waits?kind=approval`), and
 * for one of them the end of its run's journal: the last few steps, and the agent's reason (the
 * text of the model step whose response made the tool call). Bounded: one page of the journal's
 * tail, never the whole journal.
 */
import type { OpenWait } from "../../../src/client/index.js";
import { api } from "../api.js";
import { journalPage, type Step } from "./runs-api.js";

/** An agent's tool approval request (src/agent/approvals.ts), as the server marks it (`requestKind`); anything else is a workflow's approval. */
export interface ToolRequest {
  tool: string;
  toolCallId: string;
  input: unknown;
  fingerprint: string;
  inputSchema: Record<string, unknown>;
}

export function toolRequest(w: Pick<OpenWait, "request" | "requestKind">): ToolRequest | null {
  const request = w.request;
  if (w.requestKind !== "tool-call") return null;
  if (request === null || typeof request !== "object" || Array.isArray(request)) return null;
  const r = request as Record<string, unknown>;
  if (typeof r.tool !== "string" || typeof r.toolCallId !== "string" || typeof r.fingerprint !== "string") return null;
  if (r.inputSchema === null || typeof r.inputSchema !== "object" || Array.isArray(r.inputSchema)) return null;
  return r as unknown as ToolRequest;
}

export const INBOX_LIMIT = 100;
/** The journal's tail read for one approval: where the agent's reason is looked for. */
const TAIL = 50;
export const RECENT = 5;

export function openApprovals() {
  return api.waits.list({ kind: "approval", limit: INBOX_LIMIT });
}

export interface Context {
  reason: string | null;
  recent: Step[];
  total: number;
}

export async function approvalContext(w: OpenWait): Promise<Context> {
  const head = await journalPage(w.runId, 0, 1);
  const offset = Math.max(0, head.total - TAIL);
  const tail = offset === 0 && head.total <= 1 ? head : await journalPage(w.runId, offset, TAIL);
  const call = toolRequest(w)?.toolCallId;
  let reason: string | null = null;
  if (call !== undefined) {
    for (const s of [...tail.steps].reverse()) {
      const parts = modelParts(s);
      if (!parts.some((p) => p.type === "tool-call" && p.toolCallId === call)) continue;
      const text = parts
        .filter((p) => p.type === "text" && typeof p.text === "string")
        .map((p) => p.text)
        .join("\n")
        .trim();
      reason = text === "" ? null : text;
      break;
    }
  }
  return { reason, recent: tail.steps.slice(-RECENT), total: tail.total };
}

function modelParts(s: Step): { type?: unknown; toolCallId?: unknown; text?: unknown }[] {
  if (s.kind !== "model" || s.output === null || typeof s.output !== "object") return [];
  const content = (s.output as { content?: unknown }).content;
  return Array.isArray(content) ? (content as { type?: unknown }[]) : [];
}
