/** The runs pages' reads, typed as the pages use them: a run without its journal, the journal by page, the store's counts. */
import type { Run, Tally } from "../../../src/client/index.js";
import { api } from "../api.js";

export interface Step {
  seq: number;
  id: string;
  kind: string;
  status: string;
  attempt: number;
  output: unknown;
  error: { code?: string; message?: string; fix?: string; stepId?: string; [k: string]: unknown } | null;
  startedAt: number;
  completedAt: number | null;
}

export interface WayOut {
  what: string;
  verb: string;
  runId: string;
  args: Record<string, unknown>;
  supply: string[];
}

export interface RunHead {
  run: Run & { parentId?: string | null; sessionId?: string | null; lastStep?: { id: string } | null };
  waits: Record<string, unknown>[];
  holds: Record<string, unknown>[];
  why: { text?: string; waysOut?: WayOut[] };
  journalLength: number;
}

export interface JournalPage {
  steps: Step[];
  total: number;
  offset: number;
}

export async function runHead(runId: string): Promise<RunHead> {
  return (await api.runs.get(runId, { journal: false })) as unknown as RunHead;
}

/** One page of the journal: the page is all that crosses the wire, however long the run. */
export async function journalPage(runId: string, offset: number, limit: number, step?: string): Promise<JournalPage> {
  return (await api.runs.journal(runId, step === undefined ? { offset, limit } : { step, limit })) as unknown as JournalPage;
}

/** How many runs need a person (waiting, held), from the store's counts. */
export function needPerson(t: Tally): number {
  return (t.runs.waiting ?? 0) + (t.runs.held ?? 0);
}

export const tally = (): Promise<Tally> => api.tally();
