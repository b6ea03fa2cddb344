/**
 * The server's live event streams: one shared reader follows the whole store's event stream (a
 * poll every `pollMs`, or at once when `wake()` is told of a write this process made) and tells
 * each subscriber whose runs it saw events of to read its own next page; one timer sends every
 * subscriber a heartbeat. `close()` ends every stream with a `retry:` hint.
 *
 * Invariant: the shared reader's position is taken before a new subscriber's first read, so every
 * event committed after that read is seen by the shared reader, and the subscriber is woken for it.
 *
 * Hazard: the shared reader reads every event of the store once (payloads included); subscribers
 * read only pages of their own runs, and only when they have something new.
 */
import type { Stead } from "../../stead/stead.js";
import { SteadError } from "../../errors.js";
import { Subscriber, type StreamSource } from "./subscriber.js";

export interface StreamOptions {
  /** How often the shared reader asks the store for new events. Default 250 ms. */
  readonly pollMs?: number;
  /** How often every stream gets a comment line. Default 15 s. */
  readonly heartbeatMs?: number;
  /** Bytes queued for one subscriber's socket past which it is ended (it resumes by id). Default 1 MiB. */
  readonly maxBufferedBytes?: number;
  /** Events per store read. Default 500. */
  readonly pageLimit?: number;
  /** The reconnection delay sent as a stream ends. Default 1 s. */
  readonly retryMs?: number;
  /** Streams open at once past which a new one is refused (STEAD_TOO_MANY_STREAMS). Default 10,000. */
  readonly maxStreams?: number;
}

export class StreamHub {
  private readonly subs = new Set<Subscriber>();
  private readonly pollMs: number;
  private readonly heartbeatMs: number;
  private readonly subscriberOptions: Omit<ConstructorParameters<typeof Subscriber>[3], "onEnd">;
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
  }

  /** Live subscribers: streams open now (for a gauge). */
  get subscribers(): number {
    return this.subs.size;
  }

  /**
   * A stream of `source`'s events after `after` (null: from the first). A position this store did
   * not give is refused (STEAD_BAD_POSITION) before any byte is sent.
   */
  async open(source: StreamSource, after: string | null): Promise<ReadableStream<Uint8Array>> {
    // Each stream holds a socket, a queue and store reads: their number is bounded as their bytes are.
    if (this.subs.size >= this.maxStreams) {
      throw new SteadError("STEAD_TOO_MANY_STREAMS", `this server has ${this.subs.size} event streams open, as many as it serves`, { fix: "retry later, close streams you no longer read, or start the server with a higher --max-streams" });
    }
    // An empty read: checks the position, and says where the store's stream is now.
    const now = await this.stead.eventsAfter(after, { runIds: [], limit: 1 });
    const sub = new Subscriber(this.stead, source, after, { ...this.subscriberOptions, onEnd: (s) => this.subs.delete(s) });
    if (this.closed) {
      sub.end("the server is shutting down");
      return sub.body;
    }
    this.subs.add(sub);
    if (this.loop === null) {
      this.position = now.position;
      this.loop = this.follow();
    }
    this.heartbeats ??= setInterval(() => {
      for (const s of this.subs) s.heartbeat();
    }, this.heartbeatMs);
    this.heartbeats.unref();
    sub.wake();
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

  private async follow(): Promise<void> {
    while (!this.closed && this.subs.size > 0) {
      this.woken = false;
      try {
        for (;;) {
          const page = await this.stead.eventsAfter(this.position, { limit: this.subscriberOptions.pageLimit });
          this.position = page.position;
          if (page.events.length > 0) {
            const runs = new Set(page.events.map((e) => e.runId));
            for (const s of this.subs) if (s.wants(runs)) s.wake();
          }
          if (page.events.length < this.subscriberOptions.pageLimit || this.closed) break;
        }
      } catch (e) {
        this.subscriberOptions.logError?.(`event stream follow failed: ${e instanceof Error ? `${e.name}: ${e.message}` : "a non-error was thrown"}`);
      }
      if (!this.woken && !this.closed) await this.sleep();
    }
    // In the same turn as the last check: a subscriber opened from here on starts a new reader.
    this.loop = null;
    if (this.heartbeats) clearInterval(this.heartbeats);
    this.heartbeats = null;
  }

  private sleep(): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.sleeping = null;
        resolve();
      }, this.pollMs);
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
