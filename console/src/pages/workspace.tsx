/**
 * A run's workspace: its snapshots (each one's tarball to download), the file tree at a step, one
 * file's content at a step, and the diff between two steps. The view is the URL's:
 * `?at=<step>&file=<path>&from=<step>&to=<step>`. What a run wrote is shown as text, or said to
 * be binary; it is never rendered.
 */
import { useState } from "preact/hooks";
import { Link, navigate, path, withQuery } from "../router.js";
import { useLoad } from "../parts/load.js";
import { Empty, ErrorBox, Loading } from "../parts/states.js";
import { LongText } from "../parts/text.js";
import { Time } from "../parts/time.js";
import { WorkspaceDiff } from "../parts/workspace-diff.js";
import { diff, file, fileUrl, snapshots, stepOf, tarballUrl, tree, type Snapshot } from "../parts/workspace-api.js";

const TREE_PAGE = 500;

export function WorkspacePage(props: { runId: string; query: URLSearchParams }) {
  const { runId, query } = props;
  const base = `${path("runs", runId)}/workspace`;
  const loaded = useLoad(() => snapshots(runId), [runId]);
  if (loaded.value === undefined) return loaded.error ? <ErrorBox error={loaded.error} retry={loaded.reload} /> : <Loading what={`the workspace of run ${runId}`} />;
  const snaps = loaded.value.snapshots;
  const latest = snaps[snaps.length - 1];
  const at = query.get("at") ?? (latest ? stepOf(latest) : undefined);
  const filePath = query.get("file") ?? undefined;
  const from = query.get("from") ?? undefined;
  const to = query.get("to") ?? undefined;
  const keep = { at: query.get("at") ?? undefined, file: filePath, from, to };
  return (
    <section class="workspace">
      <p class="muted">
        <Link href={path("runs", runId)}>Run {runId}</Link> /
      </p>
      <h1>Workspace</h1>
      {loaded.value.workspace ? (
        <p class="muted">
          Works in <code>{loaded.value.workspace}</code>
        </p>
      ) : null}
      {snaps.length === 0 ? (
        <Empty>This run has no workspace snapshots (it was started without a workspace, or has not run a step yet).</Empty>
      ) : (
        <>
          <Snapshots runId={runId} base={base} snaps={snaps} at={at} keep={keep} />
          <DiffPicker base={base} snaps={snaps} from={from} to={to} keep={keep} />
          {from !== undefined && to !== undefined ? <DiffView runId={runId} base={base} from={from} to={to} /> : null}
          {at !== undefined && filePath !== undefined ? <FileView runId={runId} at={at} path={filePath} /> : null}
          {at !== undefined ? <TreeView runId={runId} base={base} at={at} file={filePath} keep={keep} /> : null}
        </>
      )}
    </section>
  );
}

type Keep = Record<"at" | "file" | "from" | "to", string | undefined>;

function Snapshots(props: { runId: string; base: string; snaps: Snapshot[]; at: string | undefined; keep: Keep }) {
  return (
    <div class="table-wrap">
      <table class="snapshots">
        <caption class="visually-hidden">Snapshots, oldest first</caption>
        <thead>
          <tr>
            <th>step</th>
            <th class="wide">kind</th>
            <th>files</th>
            <th class="wide">changed</th>
            <th>taken</th>
            <th>tarball</th>
          </tr>
        </thead>
        <tbody>
          {props.snaps.map((s) => (
            <tr key={s.id} class={stepOf(s) === props.at && s.source !== "settle" ? "selected" : undefined} data-step={stepOf(s)}>
              <td>
                <Link href={withQuery(props.base, { ...props.keep, at: stepOf(s), file: undefined })}>{stepOf(s)}</Link>
              </td>
              <td class="wide">{s.source}</td>
              <td>{s.files}</td>
              <td class="wide">{s.filesChanged}</td>
              <td>
                <Time at={s.createdAt} />
              </td>
              <td>
                <a href={tarballUrl(props.runId, stepOf(s))} download>
                  .tar.gz
                </a>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function DiffPicker(props: { base: string; snaps: Snapshot[]; from: string | undefined; to: string | undefined; keep: Keep }) {
  const steps = [...new Set(props.snaps.map(stepOf))];
  const [from, setFrom] = useState(props.from ?? steps[Math.max(0, steps.length - 2)] ?? "start");
  const [to, setTo] = useState(props.to ?? steps[steps.length - 1] ?? "start");
  const go = (e: Event) => {
    e.preventDefault();
    navigate(withQuery(props.base, { ...props.keep, from, to }));
  };
  return (
    <form class="filters ws-compare" onSubmit={go}>
      <StepSelect label="From" name="from" steps={steps} value={from} onChange={setFrom} />
      <StepSelect label="To" name="to" steps={steps} value={to} onChange={setTo} />
      <button type="submit">Compare</button>
    </form>
  );
}

function DiffView(props: { runId: string; base: string; from: string; to: string }) {
  const loaded = useLoad(() => diff(props.runId, props.from, props.to), [props.runId, props.from, props.to]);
  return (
    <section aria-label="diff">
      <h2>
        Changes from <code>{props.from}</code> to <code>{props.to}</code>
      </h2>
      {loaded.value === undefined ? (
        loaded.error ? (
          <ErrorBox error={loaded.error} retry={loaded.reload} />
        ) : (
          <Loading what="the diff" />
        )
      ) : (
        <WorkspaceDiff runId={props.runId} base={props.base} from={props.from} to={props.to} diff={loaded.value} />
      )}
    </section>
  );
}

function FileView(props: { runId: string; at: string; path: string }) {
  const loaded = useLoad(() => file(props.runId, props.at, props.path), [props.runId, props.at, props.path]);
  return (
    <section aria-label="file" class="ws-file-view">
      <h2>
        <code>{props.path}</code> at <code>{props.at}</code>
      </h2>
      {loaded.value === undefined ? (
        loaded.error ? (
          <ErrorBox error={loaded.error} retry={loaded.reload} />
        ) : (
          <Loading what="the file" />
        )
      ) : loaded.value.kind === "text" ? (
        <LongText text={loaded.value.text} limit={20_000} class="file-content" />
      ) : (
        <p class="muted">
          A binary file ({loaded.value.size.toLocaleString()} bytes): not shown.{" "}
          <a href={fileUrl(props.runId, props.at, props.path)} download>
            Download it
          </a>
        </p>
      )}
    </section>
  );
}

function TreeView(props: { runId: string; base: string; at: string; file: string | undefined; keep: Keep }) {
  const loaded = useLoad(() => tree(props.runId, props.at), [props.runId, props.at]);
  const [shown, setShown] = useState(TREE_PAGE);
  return (
    <section aria-label="files">
      <h2>
        Files at <code>{props.at}</code>
      </h2>
      {loaded.value === undefined ? (
        loaded.error ? (
          <ErrorBox error={loaded.error} retry={loaded.reload} />
        ) : (
          <Loading what="the files" />
        )
      ) : loaded.value.files.length === 0 ? (
        <Empty>No files at this step.</Empty>
      ) : (
        <>
          <ul class="ws-tree">
            {loaded.value.files.slice(0, shown).map((f) => (
              <li key={f.path}>
                {f.kind === "link" ? (
                  <span>
                    <code>{f.path}</code> <span class="muted">→ {f.target ?? "?"} (a link, not followed)</span>
                  </span>
                ) : (
                  <Link href={withQuery(props.base, { ...props.keep, at: props.at, file: f.path })} aria-current={f.path === props.file ? "page" : undefined}>
                    {f.path}
                  </Link>
                )}{" "}
                {f.size !== null ? <span class="muted">{f.size.toLocaleString()} B</span> : null}
              </li>
            ))}
          </ul>
          {loaded.value.files.length > shown ? (
            <p class="pager">
              Showing {shown} of {loaded.value.files.length}.{" "}
              <button type="button" onClick={() => setShown(shown + TREE_PAGE)}>
                Show more
              </button>
            </p>
          ) : null}
        </>
      )}
    </section>
  );
}

function StepSelect(props: { label: string; name: string; steps: readonly string[]; value: string; onChange: (step: string) => void }) {
  return (
    <label>
      {props.label}
      <select name={props.name} value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
        {props.steps.map((s) => (
          <option key={s} value={s}>
            {s}
          </option>
        ))}
      </select>
    </label>
  );
}
