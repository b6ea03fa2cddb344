/**
 * One SSE subscriber: the runs it follows, its own event stream position, and the bytes queued
 * for its socket. It reads the store only when the hub says an event of its runs was committed,
 * a page at a time from its own position, so it gets each event once and in order however late
 * it joined (its catch-up is the same read as its live part).
 *
 * Invariant: the position advances only past an event already queued, and each queued event
 * carries the position after it as its `id:`: a client cut off anywhere resumes from the last
 * event it got, with no gap and no repeat.
 *
 * Hazard: memory. The queue is bounded by `maxBufferedBytes` (plus one event): a subscriber waits
 * for its client to take bytes before it reads more, and one whose queue stays past the bound from
 * one heartbeat to the next is ended, not buffered for; it resumes by its last id.
 */
import type { Stead } from "../../stead/stead.js";
import { withModelText } from "./model-text.js";
import { eventMessage, heartbeat, opening, retryHint } from "./sse.js";

export interface StreamSource {
  /** The runs whose events the stream carries, asked again before each page; null: every run. */
  runIds(): Promise<readonly string[] | null>;
  /** Whether the set can gain runs while streaming (a session's next turn). */
  readonly grows: boolean;
}

export interface SubscriberOptions {
  readonly maxBufferedBytes: number;
  readonly pageLimit: number;
  readonly retryMs: number;
  readonly onEnd: (s: Subscriber) => void;
  readonly logError?: (line: string) => void;
}

/** Runs a growing source was found not to hold: a run never joins a session later, so each is asked about once. */
const OUTSIDE_MAX = 10_000;

export class Subscriber {
  readonly body: ReadableStream<Uint8Array>;
  private controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  private known: ReadonlySet<string> | null | undefined;
  private readonly outside = new Set<string>();
  /** Runs the hub saw events of, not known to be this source's or outside it: settled by the next read. */
  private unsure = new Set<string>();
  private ended = false;
  private reading: Promise<void> | null = null;
  private again = false;
  private waiting: (() => void) | null = null;
  /** The client took bytes since the last heartbeat. */
  private taken = false;
  private stalledAtLastBeat = false;

  constructor(
    private readonly stead: Stead,
    private readonly source: StreamSource,
    private position: string | null,
    private readonly options: SubscriberOptions,
  ) {
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (c) => {
          this.controller = c;
          c.enqueue(opening(options.retryMs));
        },
        // The client took bytes and the queue is below its bound again.
        pull: () => this.roomMade(),
        // The client went away: nothing more is read for it.
        cancel: () => this.finish(),
      },
      { highWaterMark: options.maxBufferedBytes, size: (chunk) => chunk.byteLength },
    );
  }

  /** Whether an event of one of `runIds` may be for this stream. */
  wants(runIds: ReadonlySet<string>): boolean {
    if (this.ended) return false;
    if (this.known === null || this.known === undefined) return true;
    let wanted = false;
    for (const id of runIds) {
      if (this.known.has(id)) wanted = true;
      else if (this.source.grows && !this.outside.has(id)) {
        this.unsure.add(id);
        wanted = true;
      }
    }
    return wanted;
  }

  /** Reads what is new for it, now or right after the read in progress. */
  wake(): void {
    if (this.ended) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = this.drain().finally(() => {
      this.reading = null;
    });
  }

  /** Settles once no read of its is in progress. */
  async idle(): Promise<void> {
    while (this.reading) await this.reading;
  }

  /**
   * A heartbeat, unless the queue is past its bound. Past it with nothing taken by the client since
   * the heartbeat before, twice in a row (a whole interval stalled), the stream is ended. A client
   * that reads, however far behind, is never ended: its queue drains and is refilled.
   */
  heartbeat(): void {
    if (this.ended || !this.controller) return;
    const full = (this.controller.desiredSize ?? 0) <= 0;
    const stalled = full && !this.taken;
    this.taken = false;
    if (stalled) {
      if (this.stalledAtLastBeat) this.end("dropped: the client read slower than events were written; reconnect with Last-Event-ID");
      this.stalledAtLastBeat = true;
      return;
    }
    this.stalledAtLastBeat = false;
    if (!full) this.controller.enqueue(heartbeat());
  }

  /** Ends the stream with a reconnection hint. */
  end(why: string): void {
    if (this.ended) return;
    this.controller?.enqueue(retryHint(this.options.retryMs, why));
    try {
      this.controller?.close();
    } catch {
      // Already closed by the client's cancel.
    }
    this.finish();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.roomMade();
    this.options.onEnd(this);
  }

  private roomMade(): void {
    this.taken = true;
    const w = this.waiting;
    this.waiting = null;
    w?.();
  }

  /**
   * Queues `chunk` once the queue is below its bound (so it holds at most the bound and one
   * event). Returns whether the stream goes on.
   */
  private async send(chunk: Uint8Array): Promise<boolean> {
    while (!this.ended && this.controller && (this.controller.desiredSize ?? 0) <= 0) {
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
      });
    }
    if (this.ended || !this.controller) return false;
    this.controller.enqueue(chunk);
    return true;
  }

  private async drain(): Promise<void> {
    try {
      do {
        this.again = false;
        await this.readToEnd();
      } while (this.again && !this.ended);
    } catch (e) {
      this.options.logError?.(`event stream read failed: ${e instanceof Error ? `${e.name}: ${e.message}` : "a non-error was thrown"}`);
      this.end("the server could not read the store; reconnect with Last-Event-ID");
    }
  }

  private async readToEnd(): Promise<void> {
    const limit = this.options.pageLimit;
    // The hub saw these runs' events committed before this read began, so the runs' rows are
    // visible to it: one the source does not list now never joins it.
    const settling = this.unsure;
    this.unsure = new Set();
    while (!this.ended) {
      const ids = await this.source.runIds();
      const page = await this.stead.eventsAfter(this.position, ids === null ? { limit } : { runIds: ids, limit });
      if (ids !== null && this.source.grows) {
        // A run that joined as the page was read may have events in its snapshot that the filter
        // left out: the page is read again with it, from the same position.
        const later = await this.source.runIds();
        if (later !== null && later.some((id) => !ids.includes(id))) {
          this.known = new Set(later);
          continue;
        }
      }
      this.known = ids === null ? null : new Set(ids);
      if (ids !== null && this.source.grows) {
        if (this.outside.size > OUTSIDE_MAX) this.outside.clear();
        for (const id of settling) if (!ids.includes(id)) this.outside.add(id);
      }
      for (const [i, event] of page.events.entries()) {
        const position = page.positions[i];
        if (position === undefined || !(await this.send(eventMessage(position, await withModelText(this.stead, event))))) return;
        this.position = position;
      }
      this.position = page.position;
      if (page.events.length < limit) return;
    }
  }
}
