/**
 * What the sessions routes answer, by the console's names for the API's shapes
 * (src/client/api-types.ts: SessionView, TurnView, TurnTranscript, SessionTranscript).
 */
import type { SessionTranscript, SessionView, TranscriptEntry, TurnView } from "../../../src/client/index.js";

export type { TurnTranscript } from "../../../src/client/index.js";
export type SessionRow = SessionView;
export type TurnRow = TurnView;
export type Entry = TranscriptEntry;
export type Transcript = SessionTranscript;

export const ms = (iso: string): number => Date.parse(iso);
