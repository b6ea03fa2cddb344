/**
 * What was decided on an approval, in words: approved or denied, by whom and when (as the server
 * recorded it: the answer to the decision, or the wait's stored result), for which calls, with
 * edited arguments or a reason where there were. The inbox keeps a note of each decision made on
 * the page after its card has gone, so a click is never followed by nothing.
 */
import type { DecisionResult, Replayed } from "../../../src/client/index.js";
import { Link, path } from "../router.js";
import { Time } from "./time.js";

export interface Decision {
  runId: string;
  wait: string;
  approved: boolean;
  /** Who made the decision that stands (the first one, when `already`). */
  by: string | null;
  at: number | null;
  /** The same decision was recorded before this one: it stands, by its own author. */
  already: boolean;
  scope?: "once" | "run" | undefined;
  tool?: string | undefined;
  edited?: boolean | undefined;
  reason?: string | undefined;
}

/** A decision from the answer of `POST …/approve` or `…/deny` and what the page sent. */
export function decisionOf(answer: Partial<Replayed<DecisionResult>>, sent: Omit<Decision, "approved" | "by" | "at" | "already">, approved: boolean): Decision {
  return {
    ...sent,
    approved: typeof answer.approved === "boolean" ? answer.approved : approved,
    by: typeof answer.by === "string" ? answer.by : null,
    at: typeof answer.at === "number" ? answer.at : null,
    already: answer.already === true,
  };
}

/** A decision from a resolved wait's stored result and who resolved it. */
export function decisionOfWait(runId: string, wait: { name: string; result?: unknown; resolvedBy?: unknown; resolvedAt?: unknown }): Decision | null {
  const r = wait.result;
  if (r === null || typeof r !== "object" || typeof (r as { approved?: unknown }).approved !== "boolean") return null;
  const o = r as { approved: boolean; by?: unknown; at?: unknown; scope?: unknown; input?: unknown; reason?: unknown };
  const by = typeof o.by === "string" ? o.by : typeof wait.resolvedBy === "string" ? wait.resolvedBy : null;
  const at = typeof o.at === "number" ? o.at : typeof wait.resolvedAt === "number" ? wait.resolvedAt : null;
  return {
    runId,
    wait: wait.name,
    approved: o.approved,
    by,
    at,
    already: false,
    scope: o.scope === "run" || o.scope === "once" ? o.scope : undefined,
    edited: o.input !== undefined,
    reason: typeof o.reason === "string" && o.reason !== "" ? o.reason : undefined,
  };
}

/** "Approved by olga 5 seconds ago, for this call only, with edited arguments. Reason: …" */
export function DecisionWords(props: { d: Decision }) {
  const d = props.d;
  const scope = d.scope === "run" ? `for every call of ${d.tool ?? "the tool"} for the rest of the run` : d.scope === "once" ? "for this call only" : null;
  return (
    <>
      <strong>{d.approved ? "Approved" : "Denied"}</strong>
      {d.already ? " already" : ""}
      {d.by !== null ? (
        <>
          {" "}
          by <span class="decided-by">{d.by}</span>
        </>
      ) : (
        " (by an anonymous caller)"
      )}{" "}
      <Time at={d.at} />
      {d.approved && scope ? `, ${scope}` : ""}
      {d.approved && d.edited ? ", with edited arguments" : ""}.{d.reason ? ` Reason: ${d.reason}` : ""}
    </>
  );
}

/** The inbox's note of decisions made on this page, newest first, each until it is dismissed (a live region: a screen reader says each). */
export function DecidedNotes(props: { decided: Decision[]; dismiss: (d: Decision) => void }) {
  return (
    <div class="decided" role="status" aria-live="polite">
      {props.decided.length > 0 ? (
        <ul aria-label="Decided on this page">
          {props.decided.map((d) => (
            <li key={`${d.runId}/${d.wait}`} data-decided={`${d.runId}/${d.wait}`}>
              <code>{d.wait}</code> of run{" "}
              <Link href={path("runs", d.runId)}>
                <code>{d.runId}</code>
              </Link>
              : <DecisionWords d={d} />{" "}
              <button type="button" class="link" onClick={() => props.dismiss(d)} aria-label={`Dismiss the note on ${d.wait} of run ${d.runId}`}>
                Dismiss
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
