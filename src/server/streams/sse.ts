/**
 * Server-Sent Events framing (the WHATWG `text/event-stream` format). Each event is one message
 * whose `id:` is the event stream position after it and whose `data:` is the event as JSON.
 *
 * Invariant: a field's value never holds CR or LF. Positions are printable ASCII (the store gives
 * nothing else), and JSON.stringify escapes both characters inside strings, so one `data:` line
 * carries the whole event however the model or tool wrote it.
 */
import type { EventView } from "../../engine/runs/views.js";

const encoder = new TextEncoder();

export const SSE_TYPE = "text/event-stream; charset=utf-8";

export const eventMessage = (position: string, event: EventView): Uint8Array => encoder.encode(`id: ${position}\ndata: ${JSON.stringify(event)}\n\n`);

const HEARTBEAT = encoder.encode(": heartbeat\n\n");

/** A comment line: ignored by every client, it keeps proxies and idle timers from closing the stream. One buffer, sent to every stream. */
export const heartbeat = (): Uint8Array => HEARTBEAT;

/**
 * The last message of a run's stream, after the run's final event: a named event (`end`), so
 * `EventSource`'s `onmessage` never takes it for an event of the store. It carries no `id:`: the
 * position stays the final event's, and a reconnect from it is answered 204 (an EventSource stops).
 */
export const endMessage = (runId: string, status: string): Uint8Array => encoder.encode(`event: end\ndata: ${JSON.stringify({ runId, status })}\n\n`);

/** The reconnection delay a client should use, sent as the stream ends (shutdown, or dropped for falling behind). */
export const retryHint = (ms: number, why: string): Uint8Array => encoder.encode(`: ${why}\nretry: ${Math.max(0, Math.round(ms))}\n\n`);

/**
 * Where a stream that starts "now" starts: an `id:` with no data. It is no event (EventSource
 * dispatches none), but it sets the id a reconnect sends as `Last-Event-ID`, so a stream lost
 * before its first event resumes from where it began, not from a later "now".
 */
export const startMessage = (position: string): Uint8Array => encoder.encode(`id: ${position}\n\n`);

/** The first bytes of a stream: the reconnection delay (and the response's headers go out with it). */
export const opening = (retryMs: number): Uint8Array => encoder.encode(`retry: ${Math.max(0, Math.round(retryMs))}\n\n`);
