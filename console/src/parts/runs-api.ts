/** The runs pages' reads: a run without its journal, the journal by page, the store's counts (the API's shapes, src/client/api-types.ts). */
import type { JournalPage, RunDetailWithoutJournal, StepView, Tally, WayOut } from "../../../src/client/index.js";
import { api } from "../api.js";

export type { JournalPage, WayOut };
export type Step = StepView;
export type RunHead = RunDetailWithoutJournal;

export const runHead = (runId: string): Promise<RunHead> => api.runs.get(runId, { journal: false });

/** One page of the journal: the page is all that crosses the wire, however long the run. */
export const journalPage = (runId: string, offset: number, limit: number, step?: string): Promise<JournalPage> => api.runs.journal(runId, step === undefined ? { offset, limit } : { step, limit });

/** How many runs need a person (waiting, held), from the store's counts. */
export function needPerson(t: Tally): number {
  return (t.runs.waiting ?? 0) + (t.runs.held ?? 0);
}

export const tally = (): Promise<Tally> => api.tally();
