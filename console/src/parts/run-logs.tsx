/**
 * A run's events, live (`api.runs.events`): only the last `KEEP` are held and shown, however many
 * the run has, and renders are batched so a fast run does not render once per event. The run's
 * stream ends after its final event; should the run go on (a retry, a resume), the store's shared
 * stream says so and the log follows again from where it stopped.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import type { Event } from "../../../src/client/index.js";
import { api } from "../api.js";
import { useLiveEvents } from "../live.js";
import { brief } from "./text.js";
import { Time } from "./time.js";

export const KEEP = 200;

/** The run's latest events (at most KEEP), following the live stream while the view is shown. */
export function useRunEvents(runId: string): Event[] {
  const [events, setEvents] = useState<Event[]>([]);
  const [round, setRound] = useState(0);
  const buffer = useRef<Event[]>([]);
  const last = useRef<{ runId: string; position: string } | undefined>(undefined);
  const ended = useRef(false);
  useLiveEvents(
    () => {
      if (!ended.current) return;
      ended.current = false;
      setRound((r) => r + 1);
    },
    (e) => e.runId === runId && e.type !== "model.delta",
  );
  useEffect(() => {
    const stop = new AbortController();
    if (last.current?.runId !== runId) {
      last.current = undefined;
      buffer.current = [];
    }
    // A batch whose render the last round's cleanup cancelled is shown now.
    setEvents([...buffer.current]);
    ended.current = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const flush = () => {
      timer = undefined;
      setEvents([...buffer.current]);
    };
    void (async () => {
      try {
        const after = last.current?.position;
        for await (const e of api.runs.events(runId, { signal: stop.signal, ...(after === undefined ? {} : { after }) })) {
          last.current = { runId, position: e.position };
          if (e.type === "model.delta") continue;
          buffer.current.push(e);
          if (buffer.current.length > KEEP) buffer.current.splice(0, buffer.current.length - KEEP);
          timer ??= setTimeout(flush, 200);
        }
        // The run ended: the next event of it on the shared stream starts the log again.
        if (!stop.signal.aborted) ended.current = true;
      } catch {
        // The shell says when the connection is lost; the log keeps what it had.
      }
    })();
    return () => {
      stop.abort();
      clearTimeout(timer);
    };
  }, [runId, round]);
  return events;
}

export function RunLogs(props: { events: Event[] }) {
  if (props.events.length === 0) return <p class="state">No events yet.</p>;
  return (
    <ol class="run-logs" aria-label="Latest events" start={1}>
      {props.events.map((e) => (
        <li key={e.seq}>
          <Time at={e.at} /> <code>{e.type}</code> <span class="muted">{brief(e.data, 160)}</span>
        </li>
      ))}
    </ol>
  );
}
