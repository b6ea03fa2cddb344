/** Honest states: loading, empty, and an error that says what failed and what to do. */
import type { ComponentChildren } from "preact";
import { problemOf } from "../api.js";

export function Loading(props: { what: string }) {
  return (
    <p class="state" role="status" aria-live="polite">
      Loading {props.what}…
    </p>
  );
}

export function Empty(props: { children: ComponentChildren }) {
  return <p class="state empty">{props.children}</p>;
}

export function ErrorBox(props: { error: unknown; retry?: () => void }) {
  const p = problemOf(props.error);
  return (
    <div class="error" role="alert">
      <p>
        <strong>{p.status === 0 ? "No answer from the server" : `Refused (${p.status} ${p.code})`}</strong>: {p.message}
      </p>
      {p.fix ? <p class="fix">{p.fix}</p> : null}
      {props.retry ? (
        <button type="button" onClick={props.retry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}
