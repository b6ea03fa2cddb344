/**
 * `stead/client`: the typed HTTP client of a Stead server. It imports nothing of Stead's runtime
 * (no store, no native module): it runs wherever fetch does.
 */
export { createClient, type ClientOptions, type Events, type Keyed, type SteadClient } from "./client.js";
export { SteadClientError } from "./errors.js";
export type { StreamOptions } from "./events.js";
export type { Event, Hold, JournalPage, Me, OpenWait, OpenWaits, Replayed, Run, RunDamage, RunDetail, RunDetailWithoutJournal, RunFilter, RunList, RunStatus, Session, StreamedEvent, Tally, WaitKind } from "./types.js";
