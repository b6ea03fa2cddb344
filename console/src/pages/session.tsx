/**
 * One session: its turns as a chat (the transcript), the answer streaming in as the model writes
 * it, and a form to send the next message (not shown to a caller who may not send). A send only
 * queues a turn: a worker runs it, after the turns before it end.
 */
import { useRef, useState } from "preact/hooks";
import { api } from "../api.js";
import { useAction } from "../parts/action.js";
import { useMay } from "../me.js";
import { Link, path } from "../router.js";
import { Chat } from "../parts/session-chat.js";
import { useSessionLive } from "../parts/session-live.js";
import { ms } from "../parts/session-types.js";
import { useLoad } from "../parts/load.js";
import { Empty, ErrorBox, Loading } from "../parts/states.js";
import { Time } from "../parts/time.js";

/** Turns rendered at first; earlier ones on request, so a long session stays a bounded page. */
const SHOWN = 20;

export function SessionPage(props: { sessionId: string }) {
  const id = props.sessionId;
  const [running, setRunning] = useState<string | undefined>(undefined);
  const live = useSessionLive(id, running);
  const loaded = useLoad(async () => {
    const [one, transcript] = await Promise.all([api.sessions.get(id), api.sessions.transcript(id)]);
    const current = one.turns.find((t) => t.status === "running");
    setRunning(current?.id);
    return { ...one, transcript };
  }, [id, live.tick]);
  const [all, setAll] = useState(false);

  if (loaded.value === undefined) return loaded.error ? <ErrorBox error={loaded.error} retry={loaded.reload} /> : <Loading what={`session ${id}`} />;
  const { session, transcript } = loaded.value;
  const turns = all ? transcript.turns : transcript.turns.slice(-SHOWN);
  return (
    <section class="session">
      <p class="muted">
        <Link href="/sessions">Sessions</Link> /
      </p>
      <h1>
        Session <code>{session.id}</code>
      </h1>
      <dl class="facts">
        <dt>agent</dt>
        <dd>
          <code>{session.definition}</code>
        </dd>
        <dt>turns</dt>
        <dd>
          {session.turns}
          {session.open > 0 ? ` (${session.open} not ended yet)` : ""}
        </dd>
        <dt>last active</dt>
        <dd>
          <Time at={ms(session.updatedAt)} />
        </dd>
      </dl>
      {loaded.error ? <ErrorBox error={loaded.error} retry={loaded.reload} /> : null}
      {live.lost ? (
        <p class="banner" role="status">
          The live answer stream was lost: reconnecting… (reload to see what was written meanwhile)
        </p>
      ) : null}
      {transcript.turns.length > turns.length ? (
        <button type="button" class="link" onClick={() => setAll(true)}>
          Show the {transcript.turns.length - turns.length} earlier turns
        </button>
      ) : null}
      {transcript.turns.length === 0 ? <Empty>No turns yet.</Empty> : <Chat turns={turns} live={live.texts} />}
      <SendForm sessionId={id} onSent={loaded.reload} />
    </section>
  );
}

function SendForm(props: { sessionId: string; onSent: () => void }) {
  const may = useMay();
  const [text, setText] = useState("");
  const action = useAction();
  const { busy: sending, error } = action;
  const [queued, setQueued] = useState<{ turn: number; runId: string; already: boolean } | undefined>(undefined);
  // One key per message: a double click, or a retry after a lost answer, queues it once.
  const key = useRef<string>(crypto.randomUUID());
  if (!may("sessions.send")) return null;
  const send = async (e: Event) => {
    e.preventDefault();
    if (sending || text.trim() === "") return;
    await action.run(async () => {
      const r = await api.sessions.send(props.sessionId, text, { idempotencyKey: key.current });
      setQueued({ turn: Number(r.turn), runId: String(r.runId), already: r.already });
      setText("");
      key.current = crypto.randomUUID();
      props.onSent();
    });
  };
  return (
    <form class="send card" onSubmit={(e) => void send(e)}>
      <label>
        Message
        <textarea
          name="message"
          rows={3}
          value={text}
          onInput={(e) => {
            setText(e.currentTarget.value);
            setQueued(undefined);
          }}
        />
      </label>
      <div class="actions">
        <button type="submit" class="primary" disabled={sending || text.trim() === ""}>
          {sending ? "Sending…" : "Send"}
        </button>
        {queued ? (
          <span class="muted" role="status">
            {queued.already ? "Already queued" : "Queued"} as turn {queued.turn} (<Link href={path("runs", queued.runId)}>run {queued.runId}</Link>); a worker runs it after the turns before it.
          </span>
        ) : null}
      </div>
      {error !== undefined ? <ErrorBox error={error} /> : null}
    </form>
  );
}
