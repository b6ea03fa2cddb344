/**
 * What a model, a tool or a user wrote, shown as text: Preact sets it as a text node, never as
 * HTML (no `dangerouslySetInnerHTML` anywhere in the console). Long text is cut in view, with a
 * button to see all of it.
 */
import { useState } from "preact/hooks";

const LIMIT = 2_000;

export function LongText(props: { text: string; limit?: number; class?: string }) {
  const limit = props.limit ?? LIMIT;
  const [all, setAll] = useState(false);
  const cut = !all && props.text.length > limit;
  return (
    <div class={`long-text ${props.class ?? ""}`}>
      <pre>{cut ? props.text.slice(0, limit) : props.text}</pre>
      {props.text.length > limit ? (
        <button type="button" class="link" onClick={() => setAll(!all)}>
          {all ? "Show less" : `Show all (${props.text.length.toLocaleString()} characters)`}
        </button>
      ) : null}
    </div>
  );
}

/**
 * A JSON value, pretty-printed as text. No value (null, or absent: a step that has not finished)
 * is said in words, `none` or the caller's own: never `null` or `undefined` as text.
 */
export function Json(props: { value: unknown; limit?: number; none?: string }) {
  if (props.value === null || props.value === undefined) return <div class="muted none">{props.none ?? "none"}</div>;
  let text: string;
  try {
    text = JSON.stringify(props.value, null, 2) ?? "(a value that cannot be shown as JSON)";
  } catch {
    text = "(a value that cannot be shown as JSON)";
  }
  return <LongText text={text} class="json" {...(props.limit === undefined ? {} : { limit: props.limit })} />;
}

/** One line of a value, for a table cell: cut with an ellipsis; empty for no value (null, or absent). */
export function brief(value: unknown, max = 80): string {
  let s: string;
  if (value === null || value === undefined) return "";
  if (typeof value === "string") s = value;
  else {
    try {
      s = JSON.stringify(value) ?? "(not JSON)";
    } catch {
      s = "(not JSON)";
    }
  }
  s = s.replace(/\s+/g, " ");
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
