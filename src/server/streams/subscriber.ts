/**
 * One SSE subscriber: the runs it follows, its event stream position, and the bytes queued for its
 * socket. It is fed one of two ways:
 * - live: the hub hands it each page its shared reader read, already serialised (the same bytes
 *   for every stream), and it queues the events of its runs with no read of its own;
 * - reading: it reads its own pages from its position when the hub says an event of its runs was
 *   committed (a stream that starts in the past, or one that fell behind). Once such a read comes
 *   to where the hub is (its position is one the hub passed recently), it joins the live feed.
 *
 * A session's stream gains runs (each new turn). Live, it adds a run to its set at the run's
 * `run.created`, which the hub's page names the session of (shared-page.ts); a run's events all
 * follow its `run.created`, so it misses none of them.
 *
 * Invariant: the runs it knows include every run of its source whose `run.created` is at or before
 * its position (its set is read after that position was given, or learnt from the events it passed).
 *
 * Invariant: the position advances only past an event already queued (or not this stream's), and
 * each queued event carries the position after it as its `id:`: a client cut off anywhere resumes
 * from the last event it got, with no gap and no repeat. A live subscriber's position is always
 * one the hub's reader passed, so what the hub reads next is exactly what follows it.
 *
 * Hazard: memory. The queue is bounded by `maxBufferedBytes` (plus one page): a live subscriber
 * whose queue is past the bound when a page comes leaves the live feed and reads on its own from
 * where it is, waiting for its client to take bytes before it reads more; one whose queue stays
 * past the bound from one heartbeat to the next is ended, not buffered for; it resumes by its
 * last id.
 */
import type { Stead } from "../../stead/stead.js";
import { TERMINAL_STATUSES, type RunStatus } from "../../store/types.js";
import { withModelText } from "./model-text.js";
import { CREATED, type SharedEvent, type SharedPage } from "./shared-page.js";
import { endMessage, eventMessage, heartbeat, opening, retryHint, startMessage } from "./sse.js";

export interface StreamSource {
  /** The runs whose events the stream carries, asked when it opens and before each page it reads itself; null: every run. */
  runIds(): Promise<readonly string[] | null>;
  /** The session whose turns the stream carries: its set gains each new turn while streaming. */
  readonly session?: string;
  /** Where a stream given no position starts: its first event (the default), or where the store's events end now. */
  readonly start?: "first" | "now";
  /** The one run the stream carries: the stream ends after that run's final event. */
  readonly run?: string;
}

export interface SubscriberOptions {
  readonly maxBufferedBytes: number;
  readonly pageLimit: number;
  readonly retryMs: number;
  readonly onEnd: (s: Subscriber) => void;
  /** Asked when an own read came to the end of the store: true if the hub took it into the live feed. */
  readonly join: (s: Subscriber) => boolean;
  readonly logError?: (line: string) => void;
}

/** A run's final events: its stream ends after the first of them it sends. */
const FINAL: Readonly<Record<string, RunStatus>> = { "run.completed": "completed", "run.failed": "failed", "run.cancelled": "cancelled" };

export const isFinalStatus = (status: RunStatus): boolean => TERMINAL_STATUSES.includes(status);

export class Subscriber {
  readonly body: ReadableStream<Uint8Array>;
  private controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  /** The runs it carries (null: every run); a session's gains its new turns. */
  private known: Set<string> | null;
  private ended = false;
  private mode: "reading" | "live" = "reading";
  private reading: Promise<void> | null = null;
  private again = false;
  private waiting: (() => void) | null = null;
  /** The client took bytes since the last heartbeat. */
  private taken = false;
  private stalledAtLastBeat = false;
  /** It left the live feed at a new run it could not place: its own read must pass that run before it may join again. */
  private mustRead = false;
  /** The run had ended when the stream opened: it ends once its first read reaches the store's end. */
  private endWhenCaughtUp: RunStatus | null = null;

  constructor(
    private readonly stead: Stead,
    readonly source: StreamSource,
    private position: string | null,
    private readonly options: SubscriberOptions,
    /** The source's runs, read after `position` was given (null: every run). */
    known: readonly string[] | null,
  ) {
    this.known = known === null ? null : new Set(known);
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

  /** Where it stands: every event up to here was queued or is not its. */
  get at(): string | null {
    return this.position;
  }

  get isLive(): boolean {
    return this.mode === "live" && !this.ended;
  }

  /** Whether its own reads may hand it to the live feed (a finished run's stream ends when caught up). */
  get mayJoin(): boolean {
    return !this.ended && this.mode === "reading" && this.endWhenCaughtUp === null && this.hasRoom();
  }

  /** Its run had ended when it opened (status read before its first read): it ends once caught up. */
  endOnceCaughtUp(status: RunStatus): void {
    this.endWhenCaughtUp = status;
  }

  /** Whether `page` may hold events for this stream (a reading stream is woken for it). */
  wants(page: SharedPage): boolean {
    if (this.ended || this.mode === "live") return false;
    const known = this.known;
    if (known === null) return true;
    for (const id of page.runIds) if (known.has(id)) return true;
    const session = this.source.session;
    return session !== undefined && (page.turns.has(session) || page.unsettled);
  }

  /** A stream that starts "now": takes it into the live feed at `at`, and tells its client that position. */
  startLive(at: string): void {
    if (this.ended) return;
    this.controller?.enqueue(startMessage(at));
    this.goLive(at, []);
  }

  /**
   * Takes it into the live feed: queues `events` (what the hub's reader passed since this
   * subscriber's position, of every run) and stands at `at`, the hub's position.
   */
  goLive(at: string, events: readonly SharedEvent[]): void {
    this.mode = "live";
    this.queueShared(events, undefined);
    // Not if it left again at an event it could not place: it reads on from where it stopped.
    if (this.isLive) this.position = at;
  }

  /**
   * A page the hub's reader read from this subscriber's position. Queued whole unless its queue is
   * past the bound: then it leaves the live feed and reads on its own from where it is.
   */
  deliver(page: SharedPage): void {
    if (this.ended || this.mode !== "live") return;
    if (!this.hasRoom() && this.carries(page)) return this.readOnOwn();
    this.queueShared(page.events, page);
  }

  private carries(page: SharedPage): boolean {
    const known = this.known;
    if (known === null) return page.events.length > 0;
    for (const id of page.runIds) if (known.has(id)) return true;
    const session = this.source.session;
    return session !== undefined && (page.turns.has(session) || page.unsettled);
  }

  /** Reads what is new for it, now or right after the read in progress (a reading stream only). */
  wake(): void {
    if (this.ended || this.mode !== "reading") return;
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
    const full = !this.hasRoom();
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
    this.close(retryHint(this.options.retryMs, why));
  }

  private close(last: Uint8Array): void {
    this.controller?.enqueue(last);
    try {
      this.controller?.close();
    } catch {
      // Already closed by the client's cancel.
    }
    this.finish();
  }

  /** Ends the stream after its run's final event: an `end` message, and no reconnection hint. */
  private endRun(status: RunStatus): void {
    if (this.ended || this.source.run === undefined) return;
    this.close(endMessage(this.source.run, status));
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.roomMade();
    this.options.onEnd(this);
  }

  private hasRoom(): boolean {
    return (this.controller?.desiredSize ?? 0) > 0;
  }

  private roomMade(): void {
    this.taken = true;
    const w = this.waiting;
    this.waiting = null;
    w?.();
  }

  /**
   * Queues the shared events of its runs (for every run, the page's one joined chunk) and moves
   * its position past them, or past `page` when given. Ends a run's stream after its final event.
   * A session's stream takes a new turn in at its `run.created`; at one whose session is not known
   * it leaves the live feed, and its own read settles it.
   */
  private queueShared(events: readonly SharedEvent[], page: SharedPage | undefined): void {
    const c = this.controller;
    if (!c) return;
    const run = this.source.run;
    const known = this.known;
    const session = this.source.session;
    if (known === null && run === undefined && page) {
      if (events.length > 0) c.enqueue(page.whole());
    } else {
      for (const e of events) {
        if (known !== null && session !== undefined && e.type === CREATED) {
          if (e.session === undefined) {
            this.mustRead = true;
            return this.readOnOwn();
          }
          if (e.session === session) known.add(e.runId);
        }
        if (known !== null && !known.has(e.runId)) continue;
        c.enqueue(e.bytes);
        this.position = e.position;
        const status = e.runId === run ? FINAL[e.type] : undefined;
        if (status !== undefined) return this.endRun(status);
      }
    }
    if (page) this.position = page.to;
  }

  /** Leaves the live feed and reads from its position (which is at or before what it was handed). */
  private readOnOwn(): void {
    this.mode = "reading";
    this.wake();
  }

  /**
   * Queues `chunk` once the queue is below its bound (so it holds at most the bound and one
   * event). Returns whether the stream goes on.
   */
  private async send(chunk: Uint8Array): Promise<boolean> {
    while (!this.ended && this.controller && !this.hasRoom()) {
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
      } while (this.again && !this.ended && this.mode === "reading");
    } catch (e) {
      this.options.logError?.(`event stream read failed: ${e instanceof Error ? `${e.name}: ${e.message}` : "a non-error was thrown"}`);
      this.end("the server could not read the store; reconnect with Last-Event-ID");
    }
  }

  private async readToEnd(): Promise<void> {
    const limit = this.options.pageLimit;
    while (!this.ended && this.mode === "reading") {
      // Where the hub's reader has been since: it takes the stream into the live feed, no read needed.
      if (!this.mustRead && this.mayJoin && this.options.join(this)) return;
      const ids = await this.source.runIds();
      const page = await this.stead.runs.eventsAfter(this.position, ids === null ? { limit } : { runIds: ids, limit });
      if (ids !== null && this.source.session !== undefined) {
        // A run that joined as the page was read may have events in its snapshot that the filter
        // left out: the page is read again with it, from the same position. After this, every
        // run of the source whose run.created the page passed is in the set.
        const later = await this.source.runIds();
        if (later !== null && later.some((id) => !ids.includes(id))) continue;
      }
      this.known = ids === null ? null : new Set(ids);
      for (const [i, event] of page.events.entries()) {
        const position = page.positions[i];
        if (position === undefined || !(await this.send(eventMessage(position, await withModelText(this.stead, event))))) return;
        this.position = position;
        const status = event.runId === this.source.run ? FINAL[event.type] : undefined;
        if (status !== undefined) return this.endRun(status);
      }
      this.position = page.position;
      if (page.events.length < limit) {
        // Past every event committed before this read: the run it could not place, too.
        this.mustRead = false;
        if (this.endWhenCaughtUp !== null) return this.endRun(this.endWhenCaughtUp);
        // Caught up with the store: the hub takes it into the live feed if it is where the hub is.
        if (this.mayJoin) this.options.join(this);
        return;
      }
    }
  }
}
