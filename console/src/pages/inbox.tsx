/**
 * The approvals inbox: every open approval across runs, newest first, live; and one approval at
 * `/inbox/:runId/:wait`. Each shows its run, the tool and its arguments (or a workflow's request),
 * the agent's reason where its model gave one, the run's last few steps, and the decision's form
 * for a caller whose role may decide (anyone else is told how to get one). A decision made here
 * is said, with who made it, after its card has gone.
 */
import { useState } from "preact/hooks";
import type { OpenWait, RunDamage, StreamedEvent } from "../../../src/client/index.js";
import { useLiveTick } from "../live.js";
import { Link, path } from "../router.js";
import { approvalContext, INBOX_LIMIT, openApprovals, RECENT, toolRequest } from "../parts/inbox-api.js";
import { counted } from "../parts/count.js";
import { DamagedNote } from "../parts/damaged.js";
import { Decide, MayNotDecide } from "../parts/inbox-decide.js";
import { DecidedNotes, decisionOfWait, DecisionWords, type Decision } from "../parts/inbox-decided.js";
import { useLoad } from "../parts/load.js";
import { runHead } from "../parts/runs-api.js";
import { Empty, ErrorBox, Loading } from "../parts/states.js";
import { Status } from "../parts/status.js";
import { brief, Json, LongText } from "../parts/text.js";
import { Time } from "../parts/time.js";

const changes = (e: StreamedEvent) => e.type.startsWith("wait.") || e.type.startsWith("run.") || e.type === "approval.stale";

export function InboxPage(props: { query: URLSearchParams; runId?: string | undefined; wait?: string | undefined }) {
  if (props.runId !== undefined && props.wait !== undefined) return <OneApproval runId={props.runId} wait={props.wait} />;
  return <AllApprovals />;
}

/** Decisions said at most: older notes go first. */
const NOTES = 5;

function AllApprovals() {
  const tick = useLiveTick(changes);
  const list = useLoad(openApprovals, [tick]);
  const [decided, setDecided] = useState<Decision[]>([]);
  const waits = list.value?.waits;
  const done = (d: Decision) => {
    setDecided((all) => [d, ...all.filter((x) => x.runId !== d.runId || x.wait !== d.wait)].slice(0, NOTES));
    list.reload();
  };
  return (
    <section aria-labelledby="inbox-h">
      <h1 id="inbox-h">Approvals{waits ? ` (${waits.length}${waits.length >= INBOX_LIMIT ? "+" : ""})` : ""}</h1>
      <p class="muted">Every open approval across runs, newest first; a decision here resumes the run.</p>
      <MayNotDecide />
      <DecidedNotes decided={decided} dismiss={(d) => setDecided((all) => all.filter((x) => x !== d))} />
      {list.error ? <ErrorBox error={list.error} retry={list.reload} /> : null}
      {waits === undefined ? (
        list.error ? null : <Loading what="the open approvals" />
      ) : waits.length === 0 ? (
        <Empty>No run waits for an approval.</Empty>
      ) : (
        <ul class="inbox">
          {waits.map((w) => (
            <li key={`${w.runId}/${w.name}`}>{w.damaged ? <DamagedApproval wait={w} damaged={w.damaged} /> : <Approval wait={w} onDone={done} link />}</li>
          ))}
        </ul>
      )}
      {list.value?.truncated || (waits && waits.length >= INBOX_LIMIT) ? <p class="muted">Older approvals may not be shown: decide these first, or find a run by the runs list (status waiting).</p> : null}
    </section>
  );
}

function OneApproval(props: { runId: string; wait: string }) {
  const tick = useLiveTick((e) => e.runId === props.runId && changes(e));
  const head = useLoad(() => runHead(props.runId), [props.runId, tick]);
  if (head.value === undefined) return head.error ? <ErrorBox error={head.error} retry={head.reload} /> : <Loading what={`approval ${props.wait}`} />;
  const { run } = head.value;
  const found = head.value.waits.find((w) => w.name === props.wait);
  const crumbs = (
    <p class="muted">
      <Link href="/inbox">Approvals</Link> /
    </p>
  );
  if (!found || found.kind !== "approval") {
    return (
      <section>
        {crumbs}
        <Empty>
          Run <code>{run.id}</code> has no approval named <code>{props.wait}</code>.
        </Empty>
      </section>
    );
  }
  const { status, wakeAt, result, resolvedAt, resolvedBy } = found;
  const wait: OpenWait = { runId: run.id, definition: run.definition, sessionId: typeof run.sessionId === "string" ? run.sessionId : null, runStatus: run.status, name: props.wait, kind: "approval", request: found.request, requestKind: found.requestKind, createdAt: Number(found.createdAt), status, wakeAt, result, resolvedAt, resolvedBy };
  return (
    <section>
      {crumbs}
      {head.error ? <ErrorBox error={head.error} retry={head.reload} /> : null}
      {found.status === "open" ? (
        <>
          <MayNotDecide />
          <Approval wait={wait} onDone={head.reload} />
        </>
      ) : (
        <Resolved runId={run.id} runStatus={run.status} wait={{ ...found, name: props.wait }} />
      )}
    </section>
  );
}

/** A decided approval: what was decided, by whom and when, in words; then the result as recorded. */
function Resolved(props: { runId: string; runStatus: string; wait: Record<string, unknown> & { name: string } }) {
  const w = props.wait;
  const d = decisionOfWait(props.runId, w);
  return (
    <div class="card">
      <h1>
        <code>{w.name}</code> is decided
      </h1>
      <p class="decision">
        {d ? (
          <DecisionWords d={d} />
        ) : (
          <>
            {w.status === "timed_out" ? "Timed out" : "Settled"}
            {typeof w.resolvedBy === "string" ? ` by ${w.resolvedBy}` : ""} <Time at={typeof w.resolvedAt === "number" ? w.resolvedAt : null} />.
          </>
        )}{" "}
        Run{" "}
        <Link href={path("runs", props.runId)}>
          <code>{props.runId}</code>
        </Link>{" "}
        is <Status status={props.runStatus} />.
      </p>
      <h2>As recorded</h2>
      <Json value={w.result} />
    </div>
  );
}

/** An open approval whose request the server could not read: which run waits, and since when; no decision can be made on it. */
function DamagedApproval(props: { wait: OpenWait; damaged: RunDamage }) {
  const w = props.wait;
  return (
    <article class="card approval" data-approval={`${w.runId}/${w.name}`} aria-label={`approval ${w.name} of run ${w.runId}, damaged`}>
      <h2>
        Approval <code>{w.name}</code>
      </h2>
      <p class="muted">
        run{" "}
        <Link href={path("runs", w.runId)}>
          <code>{w.runId}</code>
        </Link>{" "}
        ({w.definition}) · waiting since <Time at={w.createdAt} />
      </p>
      <DamagedNote damaged={props.damaged} what="approval" />
    </article>
  );
}

function Approval(props: { wait: OpenWait; onDone: (d: Decision) => void; link?: boolean }) {
  const w = props.wait;
  const tool = toolRequest(w);
  // Its own run's changes only: a card re-reads its journal tail when its run moves, not on every event.
  const own = useLiveTick((e) => e.runId === w.runId && changes(e));
  const context = useLoad(() => approvalContext(w), [w.runId, w.name, own]);
  const here = path("inbox", w.runId, w.name);
  return (
    <article class="card approval" data-approval={`${w.runId}/${w.name}`} aria-label={`approval ${w.name} of run ${w.runId}`}>
      <h2>
        {tool ? (
          <>
            Tool call <code>{tool.tool}</code>
          </>
        ) : (
          <>
            Approval <code>{w.name}</code>
          </>
        )}
      </h2>
      <p class="muted">
        run{" "}
        <Link href={path("runs", w.runId)}>
          <code>{w.runId}</code>
        </Link>{" "}
        ({w.definition}) · waiting since <Time at={w.createdAt} />
        {props.link ? (
          <>
            {" "}
            · <Link href={here}>open this approval</Link>
          </>
        ) : null}
      </p>
      {context.value?.reason ? (
        <div class="reason-text">
          <h3>The agent's reason</h3>
          <LongText text={context.value.reason} class="model-text" />
        </div>
      ) : null}
      <h3>{tool ? "Arguments" : "Request"}</h3>
      <Json value={tool ? tool.input : w.request} />
      <details class="recent">
        <summary>What the run did before{context.value ? ` (last ${Math.min(RECENT, context.value.recent.length)} of ${counted(context.value.total, "step")})` : ""}</summary>
        {context.error ? <ErrorBox error={context.error} retry={context.reload} /> : null}
        {context.value === undefined ? (
          context.error ? null : <Loading what="the run's last steps" />
        ) : context.value.recent.length === 0 ? (
          <Empty>No step is journaled yet.</Empty>
        ) : (
          <ol class="recent-steps">
            {context.value.recent.map((s) => (
              <li key={s.seq}>
                <Link href={path("runs", w.runId, "steps", s.id)}>
                  <code>{s.id}</code>
                </Link>{" "}
                {s.kind} <Status status={s.status} /> <span class="muted">{brief(s.error ? (s.error.message ?? s.error) : s.output, 100)}</span>
              </li>
            ))}
          </ol>
        )}
      </details>
      <Decide wait={w} onDone={props.onDone} />
    </article>
  );
}
