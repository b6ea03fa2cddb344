import { performance } from "node:perf_hooks";
import type { AnyDefinition } from "../engine/definitions/definition.js";
import { encodePayload } from "../engine/payload.js";
import type { DefinitionAnnouncement, DefinitionAnnouncements, Owner } from "../store/types.js";

/** How long after its bound a lapsed announcement (a killed worker's) is kept before the sweeper deletes it. */
export const ANNOUNCEMENT_RETENTION_MS = 60 * 60 * 1000;

/** The least bound of an announcement: a worker with a short lease still refreshes at most every quarter of it (2.5 s). */
export const ANNOUNCEMENT_MIN_BOUND_MS = 10_000;

/**
 * How long a worker's announcement counts as alive after each refresh: its lease length (a
 * worker silent that long has lost its runs' leases too), and at least ANNOUNCEMENT_MIN_BOUND_MS,
 * so that refreshes stay coarse. Hazard (SQLite): every write takes the store's one write lock,
 * and a process frozen inside one (SIGSTOP) stalls every writer; fewer writes, fewer such windows.
 */
export const announcementBound = (leaseMs: number): number => Math.max(leaseMs, ANNOUNCEMENT_MIN_BOUND_MS);

/** What a worker announces of each definition it serves. A schema over the payload ceiling is refused here, at construction. */
export function announcementsOf(definitions: Iterable<AnyDefinition>, payloadLimit: number): DefinitionAnnouncement[] {
  return [...definitions].map((d) => ({
    name: d.name,
    kind: d.kind,
    fingerprint: d.fingerprint(),
    module: d.module,
    inputSchema: d.input ? (encodePayload(d.input.jsonSchema, `the input schema of ${d.name}`, payloadLimit) ?? null) : null,
  }));
}

/**
 * A worker's announcement of the definitions it serves (store/ports/definitions.ts): written when
 * the worker starts, refreshed at its heartbeat at most every quarter of its bound, withdrawn when
 * it stops gracefully. Never on a step's path, and never two writes at once.
 *
 * The bound (how long it counts as alive without a refresh) is {@link announcementBound}.
 */
export class Announcer {
  /** The worker id the rows on record are under; undefined before the first announcement lands. */
  private announcedAs: string | undefined;
  private refreshedAt = -Infinity;
  private writing: Promise<void> = Promise.resolve();
  private busy = false;
  private closed = false;

  constructor(
    private readonly store: DefinitionAnnouncements,
    private readonly definitions: readonly DefinitionAnnouncement[],
    private readonly ttlMs: number,
    private readonly onError: (e: unknown) => void,
  ) {}

  /** Writes if due: the first announcement, one under a new identity, or a refresh a quarter of the bound after the last. */
  beat(owner: Owner): void {
    if (this.closed || this.busy) return;
    if (this.announcedAs === owner.workerId && performance.now() - this.refreshedAt < this.ttlMs / 4) return;
    this.busy = true;
    this.writing = this.write(owner)
      .catch((e: unknown) => this.onError(e))
      .finally(() => (this.busy = false));
  }

  private async write(owner: Owner): Promise<void> {
    if (this.closed) return;
    const sent = performance.now();
    if (this.announcedAs === owner.workerId) {
      if ((await this.store.refreshAnnouncements(owner.workerId, this.ttlMs, Date.now())) > 0) {
        this.refreshedAt = sent;
        return;
      }
      // Nothing on record (pruned while this process was frozen): announce again.
    } else if (this.announcedAs !== undefined) {
      // A new identity (presence lost and regained): the old one's rows would only lapse.
      await this.store.withdrawAnnouncements(this.announcedAs);
      this.announcedAs = undefined;
    }
    if (this.closed) return;
    await this.store.announceDefinitions({ workerId: owner.workerId, host: owner.host, pid: owner.pid }, this.definitions, this.ttlMs, Date.now());
    this.announcedAs = owner.workerId;
    this.refreshedAt = sent;
  }

  /** A graceful stop: no write after this, and the announcement is deleted once any write in flight has landed. */
  async withdraw(): Promise<void> {
    this.closed = true;
    await this.writing;
    const id = this.announcedAs;
    if (id === undefined) return;
    this.announcedAs = undefined;
    await this.store.withdrawAnnouncements(id);
  }

  /** Stops announcing without writing (the worker failed, or was aborted): the announcement lapses at its bound. */
  close(): void {
    this.closed = true;
  }
}
