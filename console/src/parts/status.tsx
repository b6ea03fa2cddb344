/** A run's status as a badge; the ones that need a person are marked. */
export const NEEDS_PERSON = new Set(["waiting", "held"]);

export function Status(props: { status: string }) {
  return (
    <span class={`status status-${props.status.replace(/[^a-z]/g, "")}`} title={NEEDS_PERSON.has(props.status) ? "needs a person" : undefined}>
      {props.status}
      {NEEDS_PERSON.has(props.status) ? " •" : ""}
    </span>
  );
}
