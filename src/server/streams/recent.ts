/**
 * The events the hub's shared reader passed most recently, by the positions it passed: a stream at
 * one of those positions (a client resuming by the id of an event the hub sent, or a stream whose
 * own reads came to where the hub is) joins the shared feed by taking the events after it from
 * here, with no read of the store.
 *
 * Invariant: a position maps to the index of the first event after it, and indexes only grow, so
 * the map's insertion order is index order and eviction walks it from the front.
 *
 * Hazard: memory. Held events are bounded by `maxBytes` (they are the same bytes the streams'
 * queues hold, not copies), positions by `maxPositions`: on Postgres every read gives a new
 * position, events or not.
 */
import type { SharedEvent, SharedPage } from "./shared-page.js";

export class RecentEvents {
  private events: SharedEvent[] = [];
  /** The index of events[0] since the hub began. */
  private first = 0;
  private bytes = 0;
  private readonly at = new Map<string, number>();

  constructor(
    private readonly maxBytes: number,
    private readonly maxPositions: number,
  ) {}

  private get end(): number {
    return this.first + this.events.length;
  }

  /** Forgets everything: the hub's reader stopped, and starts afresh. */
  clear(): void {
    this.first = this.end;
    this.events = [];
    this.bytes = 0;
    this.at.clear();
  }

  add(page: SharedPage): void {
    if (page.from !== null && !this.at.has(page.from)) this.mark(page.from);
    for (const e of page.events) {
      this.events.push(e);
      this.bytes += e.bytes.byteLength;
      this.mark(e.position);
    }
    this.mark(page.to);
    this.evict();
  }

  /** The events after `position`, or undefined when it is not one passed recently. */
  after(position: string): readonly SharedEvent[] | undefined {
    const i = this.at.get(position);
    if (i === undefined || i < this.first) return undefined;
    return this.events.slice(i - this.first);
  }

  private mark(position: string): void {
    if (!this.at.has(position)) this.at.set(position, this.end);
  }

  private evict(): void {
    let drop = 0;
    while (this.bytes > this.maxBytes && drop < this.events.length) this.bytes -= (this.events[drop++] as SharedEvent).bytes.byteLength;
    if (drop > 0) {
      this.events = this.events.slice(drop);
      this.first += drop;
    }
    for (const [position, i] of this.at) {
      if (i >= this.first && this.at.size <= this.maxPositions) break;
      this.at.delete(position);
    }
  }
}
