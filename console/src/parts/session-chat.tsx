/**
 * A session's turns as a chat, from its transcript (rebuilt by the server from the journals):
 * each turn's user message, the agent's answers and tool calls as text, and the turn's state said
 * plainly (queued behind another, waiting for a worker, running, parked, held, interrupted,
 * failed). A model call still under way shows its live text; live text of a step the transcript
 * does not hold yet (a turn that started after the last read) is shown after it.
 */
import { Link, path } from "../router.js";
import { liveKey, type LiveText } from "./session-live.js";
import type { Entry, TurnTranscript } from "./session-types.js";
import { Status } from "./status.js";
import { Json, LongText } from "./text.js";
import { Time } from "./time.js";

export function Chat(props: { turns: TurnTranscript[]; live: Map<string, LiveText> }) {
  const known = new Set<string>();
  for (const t of props.turns) for (const e of t.entries) if (e.type === "model" || e.type === "model-call") known.add(`${t.runId}#${e.step}`);
  const extra = [...props.live.values()].filter((l) => !known.has(`${l.runId}#${l.step}`));
  const runs = new Set(props.turns.map((t) => t.runId));
  return (
    <div class="chat session-chat" aria-live="polite">
      {props.turns.map((t) => (
        <Turn key={t.runId} turn={t} live={props.live} extra={extra.filter((l) => l.runId === t.runId)} />
      ))}
      {extra
        .filter((l) => !runs.has(l.runId))
        .map((l) => (
          <LiveAnswer key={liveKey(l.runId, l.step, l.attempt)} live={l} />
        ))}
    </div>
  );
}

function Turn(props: { turn: TurnTranscript; live: Map<string, LiveText>; extra: LiveText[] }) {
  const t = props.turn;
  return (
    <section class="turn" data-turn={t.turn} data-run={t.runId} aria-label={`turn ${t.turn}`}>
      <p class="turn-head muted">
        turn {t.turn} · <Link href={path("runs", t.runId)}>run {t.runId}</Link> · <TurnState turn={t} />
      </p>
      {t.entries.map((e, i) => (
        <EntryView key={i} entry={e} runId={t.runId} live={props.live} />
      ))}
      {props.extra.map((l) => (
        <LiveAnswer key={liveKey(l.runId, l.step, l.attempt)} live={l} />
      ))}
      {t.error ? (
        <p class={`note turn-error ${t.outcome === "interrupted" ? "interrupted" : ""}`} role="note">
          {t.outcome === "interrupted" ? "Interrupted" : "Ended with an error"}
          {t.error.code ? ` (${t.error.code})` : ""}: {t.error.message}
          {t.outcome === "interrupted" ? " — nothing after the cut was replayed; send the message again if it still matters." : ""}
        </p>
      ) : null}
    </section>
  );
}

/** The turn's state in words: what a person waits for, or how it ended. */
function TurnState(props: { turn: TurnTranscript }) {
  const t = props.turn;
  if (t.outcome !== null) return <Status status={t.outcome} />;
  if (t.queued) return <span class="status status-queued">queued: runs once the turns before it end</span>;
  if (t.status === "pending") return <span class="status status-pending">waiting for a worker</span>;
  if (t.status === "waiting")
    return (
      <>
        <Status status="waiting" /> <span>parked until a person decides or a signal arrives</span>
      </>
    );
  if (t.status === "held")
    return (
      <>
        <Status status="held" /> <Link href={path("holds")}>needs a person</Link>
      </>
    );
  return <Status status={t.status} />;
}

function EntryView(props: { entry: Entry; runId: string; live: Map<string, LiveText> }) {
  const e = props.entry;
  switch (e.type) {
    case "user":
      return (
        <div class="msg user">
          <p class="who-said">you</p>
          <LongText text={e.text} />
        </div>
      );
    case "model":
      return (
        <div class="msg agent" data-step={e.step}>
          <p class="who-said">
            agent · <code>{e.model}</code>
          </p>
          {e.text !== "" ? <LongText text={e.text} class="answer" /> : null}
          {e.reasoning !== "" ? (
            <details>
              <summary>reasoning</summary>
              <LongText text={e.reasoning} />
            </details>
          ) : null}
        </div>
      );
    case "model-call": {
      const live = props.live.get(liveKey(props.runId, e.step, e.attempt));
      const said = { "in-flight": "writing…", "cut-off": "cut off: the call is made again when the turn resumes", retry: "to be retried", failed: `failed: ${e.message ?? ""}` }[e.status];
      return (
        <div class="msg agent" data-step={e.step} data-live={e.status === "in-flight" ? "true" : undefined}>
          <p class="who-said">
            agent · <span class={e.status === "failed" ? "note" : "muted"}>{said}</span>
          </p>
          {live ? <LongText text={live.text} class="answer" /> : null}
        </div>
      );
    }
    case "quota":
      return (
        <p class="note">
          {e.model} is over its quota: {e.message} {e.parked ? "— parked until " : "— resets "}
          <Time at={e.resetAt} />
        </p>
      );
    case "tool-call":
      return (
        <div class="tool-call">
          <p class="who-said">
            tool <code>{e.tool}</code> · {e.status}
            {e.approval ? ` · approval ${e.approval.status}${"by" in e.approval && e.approval.by ? ` by ${e.approval.by}` : ""}` : ""}
          </p>
          <Json value={e.args} limit={600} />
          {e.result !== undefined ? (
            <div class="tool-result">
              {typeof e.result === "string" ? <LongText text={e.result} limit={1000} /> : <Json value={e.result} limit={1000} />}
            </div>
          ) : null}
          {e.message ? <p class="note">{e.message}</p> : null}
        </div>
      );
  }
}

function LiveAnswer(props: { live: LiveText }) {
  return (
    <div class="msg agent" data-step={props.live.step} data-live={props.live.done ? undefined : "true"}>
      <p class="who-said">
        agent · <span class="muted">{props.live.done ? "answered" : "writing…"}</span>
      </p>
      <LongText text={props.live.text} class="answer" />
    </div>
  );
}
