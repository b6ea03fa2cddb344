/**
 * The store's live events, one stream per page load shared by every view (`/events/stream`): a
 * view subscribes to learn that something changed and reloads what it shows. The connection's
 * state is shared too, so the shell can say when it is lost (the client reconnects by itself and
 * resumes after the last event it saw).
 */
import { useEffect, useRef, useState } from "preact/hooks";
import type { StreamedEvent } from "../../src/client/index.js";
import { api, rawGet, SteadClientError } from "./api.js";

type Listener = (e: StreamedEvent) => void;
/** `ended`: the server no longer knows this browser's session (it expired, or the server restarted). */
export type Connection = "connecting" | "open" | "lost" | "ended";

const listeners = new Set<Listener>();
const connectionListeners = new Set<(c: Connection) => void>();
let connection: Connection = "connecting";
let started = false;

function start(): void {
  if (started) return;
  started = true;
  void follow().finally(() => (started = false));
}

/** Starts the stream again after a sign-in ended it. */
export function restartLive(): void {
  if (started) return;
  setConnection("connecting");
  start();
}

async function follow(): Promise<void> {
  // From now: a view loads its state by its own reads, and only needs to hear of changes.
  let last: string | undefined;
  for (;;) {
    try {
      last ??= await tailPosition();
      for await (const e of api.events({ after: last, onConnection: setConnection })) {
        last = e.position;
        for (const l of listeners) l(e);
      }
    } catch (e) {
      if (e instanceof SteadClientError && e.status === 401) {
        setConnection("ended");
        return;
      }
      setConnection("lost");
    }
    await new Promise((r) => setTimeout(r, 2000));
  }
}

/** Where the store's events end now: a stream from there carries only what happens next. */
async function tailPosition(): Promise<string> {
  return (await rawGet<{ position: string }>("/events/position")).position;
}

function setConnection(c: Connection): void {
  connection = c;
  for (const l of connectionListeners) l(c);
}

/** Calls `onEvent` for each live event (filtered by `accept`), for as long as the view is shown. */
export function useLiveEvents(onEvent: Listener, accept: (e: StreamedEvent) => boolean = () => true): void {
  const ref = useRef({ onEvent, accept });
  ref.current = { onEvent, accept };
  useEffect(() => {
    start();
    const l: Listener = (e) => {
      if (ref.current.accept(e)) ref.current.onEvent(e);
    };
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
}

/** A counter bumped (at most every `ms`) when a matching event arrives: a view's reload key. */
export function useLiveTick(accept: (e: StreamedEvent) => boolean = () => true, ms = 300): number {
  const [tick, setTick] = useState(0);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useLiveEvents(() => {
    if (timer.current !== undefined) return;
    timer.current = setTimeout(() => {
      timer.current = undefined;
      setTick((t) => t + 1);
    }, ms);
  }, accept);
  useEffect(() => () => clearTimeout(timer.current), []);
  return tick;
}

export function useConnection(): Connection {
  const [c, setC] = useState(connection);
  useEffect(() => {
    start();
    connectionListeners.add(setC);
    setC(connection);
    return () => void connectionListeners.delete(setC);
  }, []);
  return c;
}
