/**
 * A run's events, live (`api.runs.events`): only the last `KEEP` are held and shown, however many
 * the run has, and renders are batched so a fast run does not render once per event.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import type { Event } from "../../../src/client/index.js";
import { api } from "../api.js";
import { brief } from "./text.js";
import { Time } from "./time.js";

export const KEEP = 200;

/** The run's latest events (at most KEEP), following the live stream while the view is shown. */
export function useRunEvents(runId: string): Event[] {
  const [events, setEvents] = useState<Event[]>([]);
  const buffer = useRef<Event[]>([]);
  useEffect(() => {
    const stop = new AbortController();
    buffer.current = [];
    setEvents([]);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const flush = () => {
      timer = undefined;
      setEvents([...buffer.current]);
    };
    void (async () => {
      try {
        for await (const e of api.runs.events(runId, { signal: stop.signal })) {
          if (e.type === "model.delta") continue;
          buffer.current.push(e);
          if (buffer.current.length > KEEP) buffer.current.splice(0, buffer.current.length - KEEP);
          timer ??= setTimeout(flush, 200);
        }
      } catch {
        // The shell says when the connection is lost; the log keeps what it had.
      }
    })();
    return () => {
      stop.abort();
      clearTimeout(timer);
    };
  }, [runId]);
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
