/**
 * A run's journal as a timeline, one page of `GET /runs/:id/journal` at a time: a run of any
 * length renders at most `JOURNAL_PAGE` rows. The page's offset is in the URL (`?offset=`), so a
 * step's link names the page it is on.
 */
import { useState } from "preact/hooks";
import { api } from "../api.js";
import { useMay } from "../me.js";
import { Link, navigate, path, withQuery } from "../router.js";
import type { JournalPage, Step } from "./runs-api.js";
import { ErrorBox } from "./states.js";
import { Status } from "./status.js";
import { duration } from "./time.js";

export const JOURNAL_PAGE = 100;

export const lastOffset = (total: number) => Math.max(0, Math.floor((total - 1) / JOURNAL_PAGE) * JOURNAL_PAGE);

export function stepHref(runId: string, step: string, offset: number): string {
  return withQuery(path("runs", runId, "steps", step), { offset: offset > 0 ? String(offset) : undefined });
}

export function JournalPager(props: { runId: string; page: JournalPage; selected?: string | undefined }) {
  const { page, runId } = props;
  // With a step selected the offset is always written: a step link without one opens the step's own page.
  const at = (offset: number) => withQuery(props.selected ? path("runs", runId, "steps", props.selected) : path("runs", runId), { offset: props.selected || offset > 0 ? String(offset) : undefined });
  const end = lastOffset(page.total);
  const first = page.total === 0 ? 0 : page.offset + 1;
  return (
    <nav class="pager" aria-label="Pages of the journal">
      <span class="muted">
        steps {first.toLocaleString()}–{(page.offset + page.steps.length).toLocaleString()} of {page.total.toLocaleString()}
      </span>
      {page.offset > 0 ? (
        <>
          <Link href={at(0)} class="button">
            First
          </Link>
          <Link href={at(Math.max(0, page.offset - JOURNAL_PAGE))} class="button">
            Previous
          </Link>
        </>
      ) : null}
      {page.offset + JOURNAL_PAGE < page.total ? (
        <>
          <Link href={at(page.offset + JOURNAL_PAGE)} class="button">
            Next
          </Link>
          <Link href={at(end)} class="button">
            Last
          </Link>
        </>
      ) : null}
    </nav>
  );
}

/** `workspace`: whether the run has one; a run without one has no files to link to. */
export function Journal(props: { runId: string; page: JournalPage; selected?: string | undefined; workspace: boolean }) {
  const { page, runId } = props;
  const may = useMay();
  return (
    <div class="table-wrap">
      <table class="journal stack">
        <thead>
          <tr>
            <th>#</th>
            <th>Step</th>
            <th>Kind</th>
            <th>Status</th>
            <th class="wide">Attempts</th>
            <th class="wide">Duration</th>
            {props.workspace ? <th class="wide">Workspace</th> : null}
            {may("runs.fork") ? <th>Fork</th> : null}
          </tr>
        </thead>
        <tbody>
          {page.steps.map((s) => (
            <tr key={s.seq} data-step={s.id} aria-selected={props.selected === s.id ? "true" : undefined} class={props.selected === s.id ? "selected" : undefined}>
              <td class="seq">{s.seq}</td>
              <td class="key">
                <Link href={stepHref(runId, s.id, page.offset)}>
                  <code>{s.id}</code>
                </Link>
              </td>
              <td>{s.kind}</td>
              <td>
                <Status status={s.status} />
              </td>
              <td class="wide">
                {s.attempt}
                {s.attempt > 1 ? <span class="muted"> ({s.attempt - 1} retried)</span> : null}
              </td>
              <td class="wide">{s.completedAt === null ? "—" : duration(s.completedAt - s.startedAt)}</td>
              {props.workspace ? (
                <td class="wide">
                  <Link href={withQuery(path("runs", runId, "workspace"), { at: s.id })}>files</Link>
                </td>
              ) : null}
              {may("runs.fork") ? (
                <td>
                  <ForkButton runId={runId} step={s} />
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function ForkButton(props: { runId: string; step: Step }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const fork = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const r = await api.runs.fork(props.runId, { at: props.step.id, idempotencyKey: crypto.randomUUID() });
      if (r.id) navigate(path("runs", r.id));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" disabled={busy} onClick={() => void fork()} aria-label={`Fork from step ${props.step.id}`} title="a new run reusing this journal up to this step">
        Fork here
      </button>
      {error ? <ErrorBox error={error} /> : null}
    </>
  );
}
