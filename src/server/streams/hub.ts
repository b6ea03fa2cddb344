/**
 * The server's live event streams: one shared reader follows the whole store's event stream (a
 * poll every `pollMs`, or at once when `wake()` is told of a write this process made), serialises
 * each event it reads once, and hands the same bytes to every live subscriber (subscriber.ts),
 * a session's too (it learns each new run's session once per page, shared-page.ts); subscribers
 * that read on their own (a stream that starts in the past, one that fell behind) are woken when it
 * saw events of their runs. One timer sends every subscriber a heartbeat.
 * `close()` ends every stream with a `retry:` hint.
 *
 * Invariants:
 * - A live subscriber stands where the shared reader stands: the reader's position changes only
 *   in the same turn as its page is recorded (recent.ts) and listed for the live subscribers, so a
 *   subscriber taken in before that turn gets the page, and one taken in after it finds the page
 *   among the recent events.
 * - The shared reader's position is taken before a new subscriber's first read, so every event
 *   committed after that read is seen by the shared reader, and the subscriber is woken for it.
 *
 * Hazard: request latency. Handing a page to thousands of streams is thousands of socket writes:
 * it is done SLICE streams at a time with the event loop free between slices (a request waits for
 * one slice at most), and the next read waits at least three times as long as the last read and
 * hand-out took, so streams take at most about a quarter of the server's time, however many are open.
 */
import type { Stead } from "../../stead/stead.js";
import { SteadError } from "../../errors.js";
import { isFinalStatus, Subscriber, type StreamSource } from "./subscriber.js";
import { RecentEvents } from "./recent.js";
import { sharedPage, type SharedPage } from "./shared-page.js";

export interface StreamOptions {
  /** How often the shared reader asks the store for new events. Default 250 ms. */
  readonly pollMs?: number;
  /** How often every stream gets a comment line. Default 15 s. */
  readonly heartbeatMs?: number;
  /** Bytes queued for one subscriber's socket past which it leaves the live feed, and is ended if it stays stalled (it resumes by id). Default 1 MiB. */
  readonly maxBufferedBytes?: number;
  /** Events per store read. Default 500. */
  readonly pageLimit?: number;
  /** The reconnection delay sent as a stream ends. Default 1 s. */
  readonly retryMs?: number;
  /** Streams open at once past which a new one is refused (STEAD_TOO_MANY_STREAMS). Default 10,000. */
  readonly maxStreams?: number;
  /** Bytes of recent events kept for streams that join the live feed (a client resuming by id). Default 4 MiB. */
  readonly recentBytes?: number;
}

/** A stream's `after` (or `Last-Event-ID`) that asks for the whole history. */
export const FROM_FIRST = "0";

/** Subscribers handed a page between two turns of the event loop. */
const SLICE = 25;

export class StreamHub {
  private readonly subs = new Set<Subscriber>();
  private readonly pollMs: number;
  private readonly heartbeatMs: number;
  private readonly subscriberOptions: Omit<ConstructorParameters<typeof Subscriber>[3], "onEnd" | "join">;
  private readonly recent: RecentEvents;
  private position: string | null = null;
  private loop: Promise<void> | null = null;
  private sleeping: { timer: NodeJS.Timeout; resolve: () => void } | null = null;
  private woken = false;
  private heartbeats: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly maxStreams: number;

  constructor(
    private readonly stead: Stead,
    options: StreamOptions & { readonly logError?: (line: string) => void } = {},
  ) {
    this.pollMs = options.pollMs ?? 250;
    this.heartbeatMs = options.heartbeatMs ?? 15_000;
    this.maxStreams = options.maxStreams ?? 10_000;
    this.subscriberOptions = {
      maxBufferedBytes: options.maxBufferedBytes ?? 1024 * 1024,
      pageLimit: options.pageLimit ?? 500,
      retryMs: options.retryMs ?? 1000,
      ...(options.logError ? { logError: options.logError } : {}),
    };
    this.recent = new RecentEvents(options.recentBytes ?? 4 * 1024 * 1024, 10_000);
  }

  /** Live subscribers: streams open now (for a gauge). */
  get subscribers(): number {
    return this.subs.size;
  }

  /**
   * A stream of `source`'s events after `after`: FROM_FIRST for its first event; null for the
   * source's `start`. A position this store did not give is refused (STEAD_BAD_POSITION) before
   * any byte is sent. Null when the source's run had ended and nothing follows `after`: there is
   * nothing to stream (HTTP 204).
   */
  async open(source: StreamSource, after: string | null): Promise<ReadableStream<Uint8Array> | null> {
    // Each stream holds a socket, a queue and store reads: their number is bounded as their bytes are.
    if (this.subs.size >= this.maxStreams) {
      throw new SteadError("STEAD_TOO_MANY_STREAMS", `this server has ${this.subs.size} event streams open, as many as it serves`, { fix: "retry later, close streams you no longer read, or start the server with a higher --max-streams" });
    }
    const fromNow = after === null && source.start === "now";
    const position = after === FROM_FIRST ? null : after;
    // The run's status before its events: its final event commits with it, so a read after this one sees that event.
    const ended = source.run === undefined ? null : await this.stead.runs.get(source.run).then((r) => (isFinalStatus(r.status) ? r.status : null));
    // An empty read: checks the position, and says where the store's stream is now.
    const now = await this.stead.runs.eventsAfter(position, { runIds: [], limit: 1 });
    if (ended !== null && position !== null && source.run !== undefined && (await this.stead.runs.eventsAfter(position, { runIds: [source.run], limit: 1 })).events.length === 0) return null;
    // Its runs, read after `position` was given: a stream resuming from a position the shared reader passed joins it with no read of its own.
    const runs = await source.runIds();
    const sub = new Subscriber(this.stead, source, position, { ...this.subscriberOptions, onEnd: (s) => this.subs.delete(s), join: (s) => this.join(s) }, runs);
    if (this.closed) {
      sub.end("the server is shutting down");
      return sub.body;
    }
    if (ended !== null) sub.endOnceCaughtUp(ended);
    this.subs.add(sub);
    if (this.loop === null) {
      this.position = now.position;
      this.recent.clear();
      this.loop = this.follow();
    }
    this.heartbeats ??= setInterval(() => {
      for (const s of this.subs) s.heartbeat();
    }, this.heartbeatMs);
    this.heartbeats.unref();
    // Where the shared reader stands: every event it reads next is new to the stream.
    if (fromNow && this.position !== null) sub.startLive(this.position);
    else sub.wake();
    return sub.body;
  }

  /** Reads the store now (a write was made that a stream may carry). */
  wake(): void {
    this.woken = true;
    const s = this.sleeping;
    if (s) {
      clearTimeout(s.timer);
      s.resolve();
    }
  }

  /** Ends every stream with a `retry:` hint and waits for reads in progress. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.heartbeats) clearInterval(this.heartbeats);
    this.heartbeats = null;
    const subs = [...this.subs];
    for (const s of subs) s.end("the server is shutting down");
    this.wake();
    await Promise.allSettled([...(this.loop ? [this.loop] : []), ...subs.map((s) => s.idle())]);
  }

  /** Takes a subscriber whose own reads came to a position the shared reader passed into the live feed. */
  private join(s: Subscriber): boolean {
    const here = this.position;
    if (this.loop === null || here === null || s.at === null) return false;
    const since = s.at === here ? [] : this.recent.after(s.at);
    if (since === undefined) return false;
    s.goLive(here, since);
    return true;
  }

  private async follow(): Promise<void> {
    while (!this.closed && this.subs.size > 0) {
      this.woken = false;
      // After this turn's I/O: the answer to the POST whose wake-up asked for this read goes out first.
      await new Promise((r) => setImmediate(r));
      const started = performance.now();
      try {
        for (;;) {
          const from = this.position;
          const read = await this.stead.runs.eventsAfter(from, { limit: this.subscriberOptions.pageLimit });
          const page = await sharedPage(this.stead, from, read);
          // One turn: the position moves, the page is recorded, and the live subscribers are listed.
          this.position = page.to;
          this.recent.add(page);
          await this.handOut(page, [...this.subs].filter((s) => s.isLive));
          if (page.events.length > 0) for (const s of this.subs) if (s.wants(page)) s.wake();
          if (read.events.length < this.subscriberOptions.pageLimit || this.closed) break;
        }
      } catch (e) {
        this.subscriberOptions.logError?.(`event stream follow failed: ${e instanceof Error ? `${e.name}: ${e.message}` : "a non-error was thrown"}`);
      }
      // The next read waits at least three times as long as this one took (a wake-up does not cut
      // that short): however many streams are open, they take at most about a quarter of the server's time.
      const busy = performance.now() - started;
      const earliest = performance.now() + 3 * busy;
      if (!this.woken && !this.closed) await this.sleep(this.pollMs);
      const left = earliest - performance.now();
      if (left > 1 && !this.closed) await new Promise((r) => setTimeout(r, left));
    }
    // In the same turn as the last check: a subscriber opened from here on starts a new reader.
    this.loop = null;
    if (this.heartbeats) clearInterval(this.heartbeats);
    this.heartbeats = null;
  }

  /** Hands `page` to each live subscriber, a slice at a time with the event loop free between slices. */
  private async handOut(page: SharedPage, live: readonly Subscriber[]): Promise<void> {
    for (let i = 0; i < live.length; i += SLICE) {
      await new Promise((r) => setImmediate(r));
      for (const s of live.slice(i, i + SLICE)) s.deliver(page);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.sleeping = null;
        resolve();
      }, ms);
      this.sleeping = {
        timer,
        resolve: () => {
          this.sleeping = null;
          resolve();
        },
      };
    });
  }
}
