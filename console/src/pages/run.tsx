/**
 * One run: its header (fields, input, output, error), why it stands where it does with a button
 * per way out, its parent and children, the journal one page at a time (each step's files only for
 * a run with a workspace), the selected step's detail, an agent's conversation, and its latest
 * events live.
 */
import { api } from "../api.js";
import { useLiveTick } from "../live.js";
import { Link, path, withQuery } from "../router.js";
import { counted } from "../parts/count.js";
import { useLoad } from "../parts/load.js";
import { Conversation, hasConversation } from "../parts/run-conversation.js";
import { Journal, JOURNAL_PAGE, JournalPager, lastOffset } from "../parts/run-journal.js";
import { RunLogs, useRunEvents } from "../parts/run-logs.js";
import { WaysOut } from "../parts/run-ways.js";
import { journalPage, runHead, type Step } from "../parts/runs-api.js";
import { snapshots } from "../parts/workspace-api.js";
import { Empty, ErrorBox, Loading } from "../parts/states.js";
import { Status } from "../parts/status.js";
import { Json } from "../parts/text.js";
import { duration, Time } from "../parts/time.js";

export function RunPage(props: { runId: string; step?: string | undefined; query: URLSearchParams }) {
  const { runId } = props;
  const tick = useLiveTick((e) => e.runId === runId && e.type !== "model.delta");
  const head = useLoad(() => runHead(runId), [runId, tick]);
  const asked = props.query.get("offset");
  // "end" (or an offset past it) shows the last page, once the journal's length is known.
  const total = head.value?.journalLength;
  const wanted = asked === "end" ? Number.POSITIVE_INFINITY : Math.max(0, Math.floor(Number(asked ?? "0")) || 0);
  const offset = total === undefined ? (Number.isFinite(wanted) ? wanted : 0) : Math.min(Number.isFinite(wanted) ? wanted - (wanted % JOURNAL_PAGE) : lastOffset(total), lastOffset(total));
  // A link to a step that names no page (pasted, or from elsewhere) asks the server for the page that holds it.
  const byStep = props.step !== undefined && asked === null ? props.step : undefined;
  const journal = useLoad(() => journalPage(runId, offset, JOURNAL_PAGE, byStep), [runId, byStep ?? offset, total === undefined && asked === "end" ? -1 : tick]);
  const children = useLoad(() => api.runs.list({ parentId: runId, limit: 20 }), [runId, tick]);
  // A run has a workspace from its start or never: read once. Until it is known, no step links to files.
  const ws = useLoad(() => snapshots(runId), [runId]);
  const hasWorkspace = ws.value !== undefined && (ws.value.workspace !== null || ws.value.snapshots.length > 0);
  const events = useRunEvents(runId);

  if (head.value === undefined) return head.error ? <ErrorBox error={head.error} retry={head.reload} /> : <Loading what={`run ${runId}`} />;
  const { run, why } = head.value;
  const page = journal.value;
  const selected: Step | undefined = props.step === undefined ? undefined : page?.steps.find((s) => s.id === props.step);
  const parentId = typeof run.parentId === "string" ? run.parentId : null;
  return (
    <article aria-labelledby="run-h">
      <p class="muted">
        <Link href="/runs">Runs</Link> /
      </p>
      <h1 id="run-h">
        Run <code>{run.id}</code> <Status status={run.status} />
      </h1>
      {head.error ? <ErrorBox error={head.error} retry={head.reload} /> : null}
      <dl class="facts">
        <dt>Definition</dt>
        <dd>{run.definition}</dd>
        <dt>Created</dt>
        <dd>
          <Time at={run.createdAt} />
        </dd>
        <dt>Updated</dt>
        <dd>
          <Time at={run.updatedAt} />
        </dd>
        <dt>Journal</dt>
        <dd>{counted(head.value.journalLength, "step")}</dd>
        {ws.value !== undefined ? (
          <>
            <dt>Workspace</dt>
            <dd class="run-workspace">
              {hasWorkspace ? (
                <>
                  {ws.value.workspace !== null ? <code>{ws.value.workspace}</code> : null} <Link href={path("runs", run.id, "workspace")}>its files</Link>
                </>
              ) : (
                <span class="muted">none: the run was started without one</span>
              )}
            </dd>
          </>
        ) : null}
        {parentId ? (
          <>
            <dt>Parent</dt>
            <dd>
              <Link href={path("runs", parentId)}>
                <code>{parentId}</code>
              </Link>
            </dd>
          </>
        ) : null}
      </dl>
      <section aria-labelledby="why-h" class="card why">
        <h2 id="why-h">Why it is {run.status}</h2>
        <p>{why.text ?? ""}</p>
        <WaysOut ways={why.waysOut ?? []} onDone={head.reload} />
      </section>
      <details open class="run-values">
        <summary>Input, output, error</summary>
        <h3>Input</h3>
        <Json value={run.input} />
        {run.output !== null && run.output !== undefined ? (
          <>
            <h3>Output</h3>
            <Json value={run.output} />
          </>
        ) : null}
        {run.error ? (
          <>
            <h3>Error</h3>
            <Json value={run.error} />
          </>
        ) : null}
      </details>
      {children.value && children.value.runs.length > 0 ? (
        <section aria-labelledby="children-h">
          <h2 id="children-h">Child runs</h2>
          <ul>
            {children.value.runs.map((c) => (
              <li key={c.id}>
                <Link href={path("runs", c.id)}>
                  <code>{c.id}</code>
                </Link>{" "}
                {c.definition} <Status status={c.status} />
              </li>
            ))}
          </ul>
          {children.value.nextCursor ? (
            <Link href={withQuery("/runs", { parent: run.id })}>more children…</Link>
          ) : null}
        </section>
      ) : null}
      <section aria-labelledby="journal-h">
        <h2 id="journal-h">Journal</h2>
        {journal.error ? <ErrorBox error={journal.error} retry={journal.reload} /> : null}
        {page === undefined ? (
          journal.error ? null : <Loading what="the journal" />
        ) : page.total === 0 ? (
          <Empty>No step is journaled yet.</Empty>
        ) : (
          <>
            <JournalPager runId={runId} page={page} selected={props.step} />
            <Journal runId={runId} page={page} selected={props.step} workspace={hasWorkspace} />
            <JournalPager runId={runId} page={page} selected={props.step} />
          </>
        )}
      </section>
      {props.step !== undefined && page !== undefined ? (
        <section aria-labelledby="step-h" class="card step-detail">
          <h2 id="step-h">
            Step <code>{props.step}</code>
          </h2>
          {selected ? <StepDetail step={selected} /> : <Empty>This step is not on this page of the journal.</Empty>}
        </section>
      ) : null}
      {page && hasConversation(page.steps) ? (
        <section aria-labelledby="conv-h">
          <h2 id="conv-h">Conversation</h2>
          <Conversation input={run.input} steps={page.steps} offset={page.offset} events={events} />
        </section>
      ) : null}
      <section aria-labelledby="logs-h">
        <h2 id="logs-h">Latest events</h2>
        <RunLogs events={events} />
      </section>
    </article>
  );
}

function StepDetail(props: { step: Step }) {
  const s = props.step;
  return (
    <>
      <p>
        {s.kind}, <Status status={s.status} />, attempt {s.attempt}, started <Time at={s.startedAt} />
        {s.completedAt !== null ? `, took ${duration(s.completedAt - s.startedAt)}` : ""}
      </p>
      <h3>Output</h3>
      <Json value={s.output} none={s.status === "completed" ? "none: the step returned no value" : `no output yet: the step is ${s.status}`} />
      {s.error ? (
        <>
          <h3>Error</h3>
          <Json value={s.error} />
        </>
      ) : null}
    </>
  );
}
