/**
 * What workers serve, known without loading their code: a worker announces its definitions when
 * it starts, refreshes the announcement at its heartbeat, and withdraws it when it stops
 * gracefully. The catalog (one row per name and fingerprint) outlives its workers, so a start by
 * name can still check its input while no worker is alive.
 *
 * Times follow `leaseClock` (ports/claims.ts): a "caller" store judges them by the `now` it is
 * given; a "store" store by its own clock (workers' clocks may disagree), ignoring `now`.
 */
import type { AnnouncingWorker, DefinitionAnnouncement, DefinitionRecord } from "../records.js";

export interface DefinitionAnnouncements {
  /**
   * Records, in one transaction, that `worker` serves exactly `definitions` now, each alive for
   * `ttlMs` unless refreshed: every name and fingerprint enters the catalog (or is marked seen,
   * taking the kind, module and schema given), and the worker's earlier announcements are
   * replaced (a name it no longer lists is withdrawn).
   */
  announceDefinitions(worker: AnnouncingWorker, definitions: readonly DefinitionAnnouncement[], ttlMs: number, now: number): Promise<void>;

  /**
   * Marks every announcement of `workerId`, and their catalog rows, seen now and alive for
   * `ttlMs` more. Returns how many it refreshed: 0 means none is on record (pruned, or never
   * written), and the worker must announce again.
   */
  refreshAnnouncements(workerId: string, ttlMs: number, now: number): Promise<number>;

  /** Deletes the announcements of `workerId` (a graceful stop). The catalog keeps its rows. */
  withdrawAnnouncements(workerId: string): Promise<void>;

  /**
   * The catalog (only `name`'s rows, with `name`), by name, then the most recently seen first,
   * each with every announcement of it on record, oldest first, judged alive while `now` is
   * before its `expiresAt`. Reads only.
   */
  listDefinitions(filter: { name?: string }, now: number): Promise<DefinitionRecord[]>;

  /** Deletes announcements that expired more than `graceMs` ago; returns how many. */
  pruneAnnouncements(graceMs: number, now: number): Promise<number>;
}
