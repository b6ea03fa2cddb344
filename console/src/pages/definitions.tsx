/**
 * What is served: the definitions workers announced (kind, fingerprints, input JSON Schema, the
 * live workers serving each and since when), and the live workers themselves. Announcements are
 * refreshed by heartbeats that write no event, so the page re-reads on a timer.
 */
import { useEffect } from "preact/hooks";
import type { DefinitionView } from "../../../src/client/index.js";
import { api } from "../api.js";
import { useLoad } from "../parts/load.js";
import { Empty, ErrorBox, Loading } from "../parts/states.js";
import { Json } from "../parts/text.js";
import { Time } from "../parts/time.js";
import { Link, path } from "../router.js";

const EVERY_MS = 15_000;
const short = (fp: string) => fp.slice(0, 12);

export function DefinitionsPage() {
  const loaded = useLoad(async () => {
    const [d, w] = await Promise.all([api.definitions.list(), api.definitions.workers()]);
    return { definitions: d.definitions, workers: w.workers };
  }, []);
  const { reload } = loaded;
  useEffect(() => {
    const t = setInterval(reload, EVERY_MS);
    return () => clearInterval(t);
  }, [reload]);

  if (loaded.value === undefined) return loaded.error ? <ErrorBox error={loaded.error} retry={reload} /> : <Loading what="definitions" />;
  const { definitions, workers } = loaded.value;
  return (
    <section class="definitions">
      <h1>Definitions</h1>
      {loaded.error ? <ErrorBox error={loaded.error} retry={reload} /> : null}
      <p class="muted">
        What workers announced they serve. A run of a definition no live worker serves waits, pending, until one does.{" "}
        <button type="button" class="link" onClick={reload}>
          Reload
        </button>
      </p>
      {definitions.length === 0 ? (
        <Empty>No definitions yet: start a worker with its workflow file (stead worker ./flows.ts).</Empty>
      ) : (
        definitions.map((d) => <DefinitionCard key={d.name} d={d} />)
      )}
      <h2>Workers</h2>
      {workers.length === 0 ? (
        <Empty>No live worker.</Empty>
      ) : (
        <div class="table-wrap">
          <table class="workers">
            <thead>
              <tr>
                <th>worker</th>
                <th>host</th>
                <th>pid</th>
                <th>serves</th>
                <th class="wide">since</th>
                <th>last heartbeat</th>
                <th>leases</th>
              </tr>
            </thead>
            <tbody>
              {workers.map((w) => (
                <tr key={w.workerId} data-worker={w.workerId}>
                  <td>
                    <code>{w.workerId}</code>
                  </td>
                  <td>{w.host}</td>
                  <td>{w.pid}</td>
                  <td>
                    {w.definitions.map((d, i) => (
                      <span key={d.name}>
                        {i > 0 ? ", " : ""}
                        {d.name} <code title={d.fingerprint}>{short(d.fingerprint)}</code>
                      </span>
                    ))}
                  </td>
                  <td class="wide">
                    <Time at={w.since} />
                  </td>
                  <td>
                    <Time at={w.lastSeenAt} />
                  </td>
                  <td class="leases">
                    {(w.leases ?? []).length === 0
                      ? "none"
                      : (w.leases ?? []).map((l, i) => (
                          <span key={l.runId}>
                            {i > 0 ? ", " : ""}
                            <Link href={path("runs", l.runId)}>{l.runId}</Link> until <Time at={l.expiresAt} />
                          </span>
                        ))}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function DefinitionCard(props: { d: DefinitionView }) {
  const d = props.d;
  return (
    <article class="card definition" data-definition={d.name}>
      <h2>
        <code>{d.name}</code> <span class="muted">{d.kind}</span>{" "}
        <span class={`status ${d.served ? "status-completed" : "status-waiting"}`}>{d.served ? "served" : "not served now"}</span>
      </h2>
      <dl class="facts">
        <dt>fingerprints</dt>
        <dd>
          {d.fingerprints.map((f, i) => (
            <span key={f}>
              {i > 0 ? ", " : ""}
              <code title={f}>{short(f)}</code>
            </span>
          ))}
        </dd>
        {d.module ? (
          <>
            <dt>module</dt>
            <dd>
              <code>{d.module}</code>
            </dd>
          </>
        ) : null}
        <dt>served since</dt>
        <dd>{d.since === null ? "—" : <Time at={d.since} />}</dd>
        <dt>last announced</dt>
        <dd>
          <Time at={d.lastSeenAt} />
        </dd>
        <dt>workers</dt>
        <dd>
          {d.workers.length === 0
            ? "none live"
            : d.workers.map((w, i) => (
                <span key={w.workerId}>
                  {i > 0 ? "; " : ""}
                  <code>{w.workerId}</code> on {w.host} (pid {w.pid}) since <Time at={w.since} />
                </span>
              ))}
        </dd>
      </dl>
      <details>
        <summary>input schema</summary>
        {d.inputSchema === null ? <p class="muted">It declares none: any JSON input is taken.</p> : <Json value={d.inputSchema} />}
      </details>
    </article>
  );
}
