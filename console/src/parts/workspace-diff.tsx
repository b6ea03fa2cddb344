/**
 * The diff of a run's workspace between two steps: the files added, changed and removed, and for
 * each one its lines marked added or removed (both sides read as text; a binary side is said as
 * such, never shown). Only the first files' lines are read at once; the rest on request.
 */
import { useState } from "preact/hooks";
import { Link, withQuery } from "../router.js";
import { useLoad } from "./load.js";
import { hunks, lineDiff } from "./line-diff.js";
import { ErrorBox, Loading } from "./states.js";
import { file, type FileContent, type TreeDiff } from "./workspace-api.js";

const OPEN_AT_ONCE = 10;
const MAX_LINES = 2_000;

export function WorkspaceDiff(props: { runId: string; base: string; from: string; to: string; diff: TreeDiff }) {
  const d = props.diff;
  const files: { path: string; change: "added" | "changed" | "removed" }[] = [
    ...d.changed.map((path) => ({ path, change: "changed" as const })),
    ...d.added.map((path) => ({ path, change: "added" as const })),
    ...d.removed.map((path) => ({ path, change: "removed" as const })),
  ].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  if (files.length === 0) return <p class="state empty">No file differs between {props.from} and {props.to}.</p>;
  return (
    <div class="ws-diff">
      <p class="counts">
        <span>{d.changed.length} changed</span>
        <span>{d.added.length} added</span>
        <span>{d.removed.length} removed</span>
      </p>
      {files.map((f, i) => (
        <FileDiff key={f.path} {...props} path={f.path} change={f.change} open={i < OPEN_AT_ONCE} />
      ))}
    </div>
  );
}

function FileDiff(props: { runId: string; base: string; from: string; to: string; path: string; change: "added" | "changed" | "removed"; open: boolean }) {
  const [open, setOpen] = useState(props.open);
  return (
    <article class={`card ws-file ws-${props.change}`} data-path={props.path}>
      <h3>
        <span class="ws-change">{props.change}</span> <code>{props.path}</code>{" "}
        {props.change !== "removed" ? (
          <Link href={withQuery(props.base, { at: props.to, file: props.path, from: props.from, to: props.to })} class="muted">
            view at {props.to}
          </Link>
        ) : null}
      </h3>
      {open ? (
        <Lines {...props} />
      ) : (
        <button type="button" class="link" onClick={() => setOpen(true)}>
          Show its lines
        </button>
      )}
    </article>
  );
}

const none: FileContent = { kind: "text", text: "" };

function Lines(props: { runId: string; from: string; to: string; path: string; change: "added" | "changed" | "removed" }) {
  const loaded = useLoad(
    () => Promise.all([props.change === "added" ? none : file(props.runId, props.from, props.path), props.change === "removed" ? none : file(props.runId, props.to, props.path)]),
    [props.runId, props.from, props.to, props.path, props.change],
  );
  const [all, setAll] = useState(false);
  if (loaded.value === undefined) return loaded.error ? <ErrorBox error={loaded.error} retry={loaded.reload} /> : <Loading what="the lines" />;
  const [a, b] = loaded.value;
  if (a.kind === "binary" || b.kind === "binary") return <p class="muted">A binary file ({a.kind === "binary" ? `${a.size} bytes before` : "text before"}, {b.kind === "binary" ? `${b.size} bytes after` : "text after"}): not shown.</p>;
  const lines = hunks(lineDiff(a.text, b.text));
  const shown = all ? lines : lines.slice(0, MAX_LINES);
  return (
    <>
      <pre class="diff-lines" aria-label={`the lines of ${props.path} that differ`}>
        {shown.map((l, i) =>
          l === null ? (
            <span key={i} class="diff-cut">
              ⋯
            </span>
          ) : (
            <span key={i} class={`diff-${l.kind}`} data-kind={l.kind}>
              {l.kind === "add" ? "+ " : l.kind === "del" ? "- " : "  "}
              {l.text}
            </span>
          ),
        )}
      </pre>
      {lines.length > shown.length ? (
        <button type="button" class="link" onClick={() => setAll(true)}>
          Show all {lines.length} lines
        </button>
      ) : null}
    </>
  );
}
