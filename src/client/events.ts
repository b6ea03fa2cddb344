/**
 * A live event stream as an async iterator: SSE read with fetch (the token in the Authorization
 * header, never in the URL), reconnecting by itself with backoff and resuming after the last
 * event it yielded (`Last-Event-ID`), so the caller sees every event once, in order, across
 * reconnects and server restarts. It ends when the caller stops (break, or the signal), and when
 * the server says the stream is over: a run's stream ends after the run's final event (an `end`
 * message, or 204 No Content to a stream resumed past it).
 *
 * Invariant: every connection but the first one of a stream that starts at its first event carries
 * a position. A stream that would start "now" (the whole store's, given no `after`) asks where the
 * store's events end before it connects and starts there: lost before its first event, it resumes
 * from that position, not from a later "now" that would skip what was written in between.
 *
 * A refusal (a 4xx: unknown run, bad token, bad position) is thrown, not retried; no answer, a 5xx
 * or a stream that ends is retried.
 */
import { refusal, SteadClientError } from "./errors.js";
import { SseParser } from "./sse.js";
import type { StreamedEvent } from "./types.js";

export interface StreamOptions {
  /**
   * Start after this position (an event's `position`); `"0"`: from the stream's first event.
   * Absent: a run's or session's stream starts at its first event, the whole store's (`events()`)
   * with the events written from when it is first read (their position is asked first).
   */
  after?: string;
  /** Stops the iterator (it then returns). */
  signal?: AbortSignal;
  /** The first reconnection delay, doubled on each failure in a row up to `maxRetryMs`; a server's `retry:` replaces it. Default 500 ms. */
  retryMs?: number;
  /** Default 10 s. */
  maxRetryMs?: number;
  /**
   * Told when the stream is answered (`open`) and when it is lost and being retried (`lost`), so
   * a page can say a connection dropped. Called once per change.
   */
  onConnection?: (state: "open" | "lost") => void;
}

export interface StreamTarget {
  /** The stream's URL (no query). */
  url: string;
  /** Where to ask the position it starts at when given none (`GET /events/position`): for a stream that would start "now". */
  positionUrl?: string;
  headers: Record<string, string>;
  fetch: typeof fetch;
}

/** Statuses worth trying again: the request may succeed later unchanged. */
const RETRIED = new Set([408, 425, 429, 500, 502, 503, 504]);

export async function* streamEvents(target: StreamTarget, options: StreamOptions = {}): AsyncGenerator<StreamedEvent, void, undefined> {
  let last = options.after;
  let delay = options.retryMs ?? 500;
  const max = options.maxRetryMs ?? 10_000;
  let failures = 0;
  let told: "open" | "lost" | undefined;
  const tell = (state: "open" | "lost") => {
    if (told === state || options.signal?.aborted) return;
    told = state;
    options.onConnection?.(state);
  };
  /** No answer, or one worth asking again: told, and waited for before the next try. */
  const lost = async () => {
    tell("lost");
    failures++;
    await sleep(backoff(delay, failures, max), options.signal);
  };
  while (!options.signal?.aborted) {
    const abort = new AbortController();
    const stop = () => abort.abort();
    options.signal?.addEventListener("abort", stop, { once: true });
    try {
      if (last === undefined && target.positionUrl !== undefined) {
        const at = await startPosition(target.fetch, target.positionUrl, target.headers, abort.signal);
        if (options.signal?.aborted) return;
        if (at === undefined) {
          await lost();
          continue;
        }
        last = at;
      }
      const headers: Record<string, string> = { ...target.headers, accept: "text/event-stream" };
      if (last !== undefined) headers["last-event-id"] = last;
      let res: Response;
      try {
        res = await target.fetch(target.url, { headers, signal: abort.signal });
      } catch {
        if (options.signal?.aborted) return;
        await lost();
        continue;
      }
      // The stream is over (a run's, resumed past its final event): nothing to wait for.
      if (res.status === 204) {
        await res.body?.cancel().catch(() => undefined);
        return;
      }
      if (!res.ok) {
        if (!RETRIED.has(res.status)) throw await refusal(res);
        await res.body?.cancel().catch(() => undefined);
        await lost();
        continue;
      }
      if (!res.body) throw new SteadClientError("STEAD_CLIENT_BAD_RESPONSE", res.status, "the stream's response has no body", "check the client's url points at a Stead server");
      tell("open");
      const parser = new SseParser();
      const reader = res.body.getReader();
      try {
        for (;;) {
          let chunk: Awaited<ReturnType<typeof reader.read>>;
          try {
            chunk = await reader.read();
          } catch {
            break;
          }
          if (chunk.done) break;
          for (const m of parser.push(chunk.value as Uint8Array)) {
            // The run's final event was the last: the stream is over, not lost.
            if (m.event === "end") return;
            if (m.event !== "message" || m.id === "") continue;
            const event = JSON.parse(m.data) as Omit<StreamedEvent, "position">;
            last = m.id;
            failures = 0;
            yield { ...event, position: m.id };
          }
          if (parser.retryMs !== undefined) delay = parser.retryMs;
        }
      } finally {
        reader.releaseLock();
      }
      if (options.signal?.aborted) return;
      // The first reconnect after a stream that ran is at the server's delay; then backoff.
      await lost();
    } finally {
      options.signal?.removeEventListener("abort", stop);
      abort.abort();
    }
  }
}

/**
 * Where the store's event stream ends now (`{ position }`); undefined when there was no answer or
 * one worth asking again. A refusal (a 4xx) is thrown, as the stream's own would be.
 */
async function startPosition(doFetch: typeof fetch, url: string, headers: Record<string, string>, signal: AbortSignal): Promise<string | undefined> {
  let res: Response;
  try {
    res = await doFetch(url, { headers: { ...headers, accept: "application/json" }, signal });
  } catch {
    return undefined;
  }
  if (!res.ok) {
    if (!RETRIED.has(res.status)) throw await refusal(res);
    await res.body?.cancel().catch(() => undefined);
    return undefined;
  }
  const body = (await res.json().catch(() => undefined)) as { position?: unknown } | undefined;
  if (typeof body?.position !== "string") throw new SteadClientError("STEAD_CLIENT_BAD_RESPONSE", res.status, "the stream's start position is not in the answer", "check the client's url points at a Stead server");
  return body.position;
}

const backoff = (base: number, failures: number, max: number): number => Math.min(max, base * 2 ** Math.max(0, failures - 1));

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
