/**
 * The sessions, most recently active first: each one's agent, turns, queue and how its last turn
 * ended. A session whose last turn the server could not read is listed with its mark (`damaged`).
 */
import { useState } from "preact/hooks";
import { api } from "../api.js";
import { useLiveTick } from "../live.js";
import { Link, path } from "../router.js";
import { DamagedMark } from "../parts/damaged.js";
import { useLoad } from "../parts/load.js";
import { ms } from "../parts/session-types.js";
import { Empty, ErrorBox, Loading } from "../parts/states.js";
import { Status } from "../parts/status.js";
import { Time } from "../parts/time.js";

const PAGE = 100;

export function SessionsPage() {
  // A run's events change a session's row (a new turn, a turn's end).
  const tick = useLiveTick((e) => e.type.startsWith("run."), 500);
  const loaded = useLoad(async () => (await api.sessions.list()).sessions, [tick]);
  const [shown, setShown] = useState(PAGE);
  if (loaded.value === undefined) return loaded.error ? <ErrorBox error={loaded.error} retry={loaded.reload} /> : <Loading what="sessions" />;
  const sessions = [...loaded.value].sort((a, b) => ms(b.updatedAt) - ms(a.updatedAt));
  return (
    <section>
      <h1>Sessions</h1>
      {loaded.error ? <ErrorBox error={loaded.error} retry={loaded.reload} /> : null}
      {sessions.length === 0 ? (
        <Empty>No sessions yet. Start one where the agent's code is: stead send &lt;session&gt; "&lt;text&gt;" --agent ./agent.ts</Empty>
      ) : (
        <div class="table-wrap">
          <table class="sessions">
            <thead>
              <tr>
                <th>session</th>
                <th class="wide">agent</th>
                <th>turns</th>
                <th>now</th>
                <th class="wide">last turn</th>
                <th>last active</th>
              </tr>
            </thead>
            <tbody>
              {sessions.slice(0, shown).map((s) => (
                <tr key={s.id} data-session={s.id}>
                  <td>
                    <Link href={path("sessions", s.id)}>{s.id}</Link>
                    {s.damaged ? (
                      <>
                        {" "}
                        <DamagedMark damaged={s.damaged} />
                      </>
                    ) : null}
                  </td>
                  <td class="wide">
                    <code>{s.definition}</code>
                  </td>
                  <td>
                    {s.turns}
                    {s.open - (s.current ? 1 : 0) > 0 ? <span class="muted"> ({s.open - (s.current ? 1 : 0)} queued)</span> : null}
                  </td>
                  <td>{s.current ? <Status status={s.current.status} /> : <span class="muted">idle</span>}</td>
                  <td class="wide">
                    {s.last ? (
                      <>
                        <Status status={s.last.outcome} />
                        {s.last.error ? <span class="muted"> {s.last.error.slice(0, 120)}</span> : null}
                      </>
                    ) : (
                      "—"
                    )}
                  </td>
                  <td>
                    <Time at={ms(s.updatedAt)} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {sessions.length > shown ? (
        <p class="pager">
          Showing {shown} of {sessions.length}.{" "}
          <button type="button" onClick={() => setShown(shown + PAGE)}>
            Show {Math.min(PAGE, sessions.length - shown)} more
          </button>
        </p>
      ) : null}
    </section>
  );
}
