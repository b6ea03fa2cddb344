/**
 * What the sessions routes answer, as the console reads them (the server's SessionView,
 * TurnView and TurnTranscript; declared here, as the client declares its shapes). A field may be
 * missing from an older server: every reader checks before it trusts.
 */
import type { RunDamage } from "../../../src/client/index.js";

export interface SessionRow {
  id: string;
  definition: string;
  turns: number;
  /** Turns not yet ended: the one running or waiting, and those queued behind it. */
  open: number;
  current: { runId: string; turn: number; status: string } | null;
  last: { runId: string; turn: number; outcome: string; error: string | null } | null;
  createdAt: string;
  updatedAt: string;
  /** Its last turn's sealed error could not be read (`last.error` is then null); opening the session is refused. */
  damaged?: RunDamage;
}

export interface TurnRow {
  id: string;
  turn: number;
  status: string;
  outcome: string | null;
  createdAt: number;
  updatedAt: number;
}

export type Entry =
  | { type: "user"; text: string }
  | { type: "model"; step: string; model: string; text: string; reasoning: string; finishReason: string; usage: { inputTokens: number; outputTokens: number } }
  | { type: "model-call"; step: string; status: "in-flight" | "cut-off" | "retry" | "failed"; attempt: number; message?: string }
  | { type: "quota"; step: string; model: string; resetAt: number; message: string; parked: boolean }
  | { type: "tool-call"; toolCallId: string; tool: string; args: unknown; step: string; approval: { status: string; by?: string | null; reason?: string | null } | null; status: string; result?: unknown; message?: string };

export interface TurnTranscript {
  turn: number;
  runId: string;
  status: string;
  outcome: string | null;
  queued: boolean;
  error: { code: string | null; message: string } | null;
  entries: Entry[];
}

export interface Transcript {
  session: string;
  definition: string;
  turns: TurnTranscript[];
}

export const ms = (iso: string): number => Date.parse(iso);
