/**
 * `stead/client`: the typed HTTP client of a Stead server. It imports nothing of Stead's runtime
 * (no store, no native module): it runs wherever fetch does.
 */
export { createClient, type ClientOptions, type Events, type Keyed, type SteadClient } from "./client.js";
export { SteadClientError } from "./errors.js";
export type { StreamOptions } from "./events.js";
/** Every shape of the API, by the names the server's views have (RunInfo, HoldView, DefinitionView, …). */
export type * from "./api-types.js";
/** The client's own names for some of them, exported since before api-types.ts. */
export type { Event, Hold, JournalPage, Me, OpenWait, OpenWaits, Replayed, Run, RunDamage, RunDetail, RunDetailWithoutJournal, RunFilter, RunList, RunStatus, Session, StreamedEvent, Tally, WaitKind } from "./types.js";
