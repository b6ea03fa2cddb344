/**
 * Holds: every open hold (`GET /holds`), live, and one at `/holds/:holdId`: what happened (kind,
 * reason, details, step) and its ways out. The choices are the ones the run's `why` lists for a
 * hold of that kind (src/engine/holds.ts HOLD_CHOICES, and fork where why offers it), never a
 * list of the console's own: a choice the engine does not offer is not shown. A hold whose sealed
 * reason the server could not read is listed with its mark and no choices (a release is refused).
 */
import type { Hold as HoldView, StreamedEvent } from "../../../src/client/index.js";
import { api } from "../api.js";
import { useLiveTick } from "../live.js";
import { Link, path } from "../router.js";
import { counted } from "../parts/count.js";
import { DamagedNote } from "../parts/damaged.js";
import { HoldChoices } from "../parts/hold-choices.js";
import { useLoad } from "../parts/load.js";
import { Empty, ErrorBox, Loading } from "../parts/states.js";
import { Json } from "../parts/text.js";
import { Time } from "../parts/time.js";

/** Holds shown at once: the rest wait for these to be released. */
const SHOWN = 50;

const changes = (e: StreamedEvent) => e.type.startsWith("hold.") || e.type.startsWith("run.");

const openHolds = () => api.holds.list();

export function HoldsPage(props: { query: URLSearchParams; holdId?: string | undefined }) {
  if (props.holdId !== undefined) return <OneHold holdId={props.holdId} />;
  return <AllHolds />;
}

function AllHolds() {
  const tick = useLiveTick(changes);
  const list = useLoad(openHolds, [tick]);
  const holds = list.value?.holds;
  return (
    <section aria-labelledby="holds-h">
      <h1 id="holds-h">Holds{holds ? ` (${holds.length})` : ""}</h1>
      <p class="muted">Runs the engine stopped because only a person can decide how they go on.</p>
      {list.error ? <ErrorBox error={list.error} retry={list.reload} /> : null}
      {holds === undefined ? (
        list.error ? null : <Loading what="the open holds" />
      ) : holds.length === 0 ? (
        <Empty>No run is on hold.</Empty>
      ) : (
        <ul class="holds">
          {holds.slice(0, SHOWN).map((h) => (
            <li key={h.id}>
              <Hold hold={h} onDone={list.reload} link />
            </li>
          ))}
        </ul>
      )}
      {holds && holds.length > SHOWN ? <p class="muted">{counted(holds.length - SHOWN, "more hold")} not shown: release these first.</p> : null}
    </section>
  );
}

function OneHold(props: { holdId: string }) {
  const tick = useLiveTick(changes);
  // A released hold is still found (open=false), to say what became of it.
  const all = useLoad(() => api.holds.list({ open: false }), [tick]);
  const crumbs = (
    <p class="muted">
      <Link href="/holds">Holds</Link> /
    </p>
  );
  if (all.value === undefined) return all.error ? <ErrorBox error={all.error} retry={all.reload} /> : <Loading what={`hold ${props.holdId}`} />;
  const h = all.value.holds.find((x) => String(x.id) === props.holdId);
  if (!h)
    return (
      <section>
        {crumbs}
        <Empty>
          No hold <code>{props.holdId}</code> in this store.
        </Empty>
      </section>
    );
  return (
    <section>
      {crumbs}
      <Hold hold={h} onDone={all.reload} />
    </section>
  );
}

function Hold(props: { hold: HoldView; onDone: () => void; link?: boolean }) {
  const h = props.hold;
  return (
    <article class="card hold" data-hold={h.id} aria-label={`hold ${h.id}: ${h.kind} of run ${h.runId}`}>
      <h2>
        <code>{h.kind}</code> on run{" "}
        <Link href={path("runs", h.runId)} class="id">
          <code>{h.runId}</code>
        </Link>
      </h2>
      <p class="muted">
        since <Time at={h.createdAt} />
        {h.stepId ? (
          <>
            {" "}
            · at step{" "}
            <Link href={path("runs", h.runId, "steps", h.stepId)}>
              <code>{h.stepId}</code>
            </Link>
          </>
        ) : null}
        {props.link ? (
          <>
            {" "}
            · <Link href={path("holds", String(h.id))}>open this hold</Link>
          </>
        ) : null}
      </p>
      {h.damaged ? (
        <DamagedNote damaged={h.damaged} what="hold" />
      ) : (
        <>
          <p class="hold-reason">{h.reason}</p>
          <details>
            <summary>Details</summary>
            <Json value={h.details} />
          </details>
        </>
      )}
      {h.status === "open" ? (
        h.damaged ? null : <HoldChoices hold={h} onDone={props.onDone} />
      ) : (
        <p>
          Released with <code>{h.choice ?? "?"}</code>
          {h.releasedBy ? ` by ${h.releasedBy}` : ""} <Time at={h.releasedAt} />.
        </p>
      )}
    </article>
  );
}
