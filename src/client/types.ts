/**
 * The client's names for the API's shapes, kept for callers that import them: each is a shape of
 * api-types.ts, where the server's answers are declared once, under the name the client has
 * always exported. Only StreamedEvent is the client's own (an event and the position after it).
 */
import type { EventView, HoldView, OpenWaitView, RunInfo, SessionView } from "./api-types.js";

export type { JournalPage, Me, OpenWaits, Replayed, RunDamage, RunDetail, RunDetailWithoutJournal, RunFilter, RunList, RunStatus, Tally, WaitKind } from "./api-types.js";

/** A run as `runs.get` gives it (a listing's run is a ListedRunView: with its last step and event). */
export type Run = RunInfo;
export type Event = EventView;
/** A hold: a run stopped until a person releases it (`GET /holds`). */
export type Hold = HoldView;
/** An open wait and the run that waits. */
export type OpenWait = OpenWaitView;
export type Session = SessionView;

/** An event from a live stream, with the position after it: pass it as `after` to resume. */
export interface StreamedEvent extends EventView {
  position: string;
}
