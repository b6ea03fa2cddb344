/**
 * A session's live model text, from its own event stream (`/sessions/:id/stream`, every turn's
 * events) followed from where the store's events end when the page opens. `model.delta` carries
 * the text as the model writes it, per run, `step` and `attempt`; a higher `try` starts the text
 * over (a retry or a failover answers afresh). `model.text` is the step's completed text: it
 * replaces whatever was shown of that step. Any other event of the session bumps `tick`, the
 * page's reload key for the turns and transcript it reads.
 *
 * Hazard: deltas written before the page opened are not in the stream from the tail; a turn
 * already running is seeded from its own event page, and every event is taken once by its
 * (run, seq), so the seed and the stream may overlap.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import type { Event } from "../../../src/client/index.js";
import { api, rawGet } from "../api.js";

export interface LiveText {
  runId: string;
  step: string;
  attempt: number;
  try: number;
  text: string;
  /** The step committed: `text` is the completed text. */
  done: boolean;
}

export const liveKey = (runId: string, step: string, attempt: number) => `${runId}#${step}#${attempt}`;

export interface SessionLive {
  texts: Map<string, LiveText>;
  tick: number;
  /** Whether the stream could not be followed (the page still reloads on its own). */
  lost: boolean;
}

/** Applies one event to `texts`; true when it changed them. */
export function applyLive(texts: Map<string, LiveText>, e: Event): boolean {
  const step = typeof e.data.step === "string" ? e.data.step : undefined;
  const attempt = typeof e.data.attempt === "number" ? e.data.attempt : 1;
  if (step === undefined) return false;
  const key = liveKey(e.runId, step, attempt);
  const prior = texts.get(key);
  if (e.type === "model.delta") {
    const text = typeof e.data.text === "string" ? e.data.text : "";
    const tryNo = typeof e.data.try === "number" ? e.data.try : 1;
    if (prior?.done) return false;
    if (prior && tryNo < prior.try) return false;
    texts.set(key, { runId: e.runId, step, attempt, try: tryNo, text: prior && prior.try === tryNo ? prior.text + text : text, done: false });
    return true;
  }
  if (e.type === "model.text") {
    texts.set(key, { runId: e.runId, step, attempt, try: prior?.try ?? 1, text: typeof e.data.text === "string" ? e.data.text : (prior?.text ?? ""), done: true });
    return true;
  }
  return false;
}

export function useSessionLive(sessionId: string, runningRunId: string | undefined): SessionLive {
  const [state, setState] = useState<SessionLive>({ texts: new Map(), tick: 0, lost: false });
  const seen = useRef(new Set<string>());
  const texts = useRef(new Map<string, LiveText>());
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  const take = (events: Event[]) => {
    let changed = false;
    let other = false;
    for (const e of events) {
      const id = `${e.runId}#${e.seq}`;
      if (seen.current.has(id)) continue;
      seen.current.add(id);
      if (applyLive(texts.current, e)) changed = true;
      if (e.type !== "model.delta") other = true;
    }
    if (changed) setState((s) => ({ ...s, texts: new Map(texts.current) }));
    if (other && timer.current === undefined) {
      timer.current = setTimeout(() => {
        timer.current = undefined;
        setState((s) => ({ ...s, tick: s.tick + 1 }));
      }, 250);
    }
  };

  useEffect(() => {
    const stop = new AbortController();
    void (async () => {
      try {
        const { position } = await rawGet<{ position: string }>("/events/position");
        for await (const e of api.sessions.events(sessionId, { after: position, signal: stop.signal, onConnection: (c) => setState((s) => ({ ...s, lost: c === "lost" })) })) take([e]);
      } catch {
        if (!stop.signal.aborted) setState((s) => ({ ...s, lost: true }));
      }
    })();
    return () => {
      stop.abort();
      clearTimeout(timer.current);
    };
  }, [sessionId]);

  useEffect(() => {
    if (runningRunId === undefined) return;
    let gone = false;
    void api.runs.eventPage(runningRunId, { limit: 1000 }).then(
      (page) => !gone && take(page.events.filter((e) => e.type === "model.delta" || e.type === "model.text")),
      () => undefined,
    );
    return () => void (gone = true);
  }, [runningRunId]);

  return state;
}
