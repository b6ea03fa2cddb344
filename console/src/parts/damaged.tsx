/**
 * The mark of a listed run, wait, hold or session whose sealed values the server could not read
 * (a row changed behind the store's back): its code, and the server's message naming the row.
 * The rest of the row is shown as stored; its sealed values (a request, a reason) are unread.
 */
import type { RunDamage } from "../../../src/client/index.js";

export function DamagedMark(props: { damaged: RunDamage }) {
  return (
    <span class="status status-failed" title={props.damaged.message}>
      damaged: {props.damaged.code}
    </span>
  );
}

/** The mark with its message spelt out, and what a person can do about it. */
export function DamagedNote(props: { damaged: RunDamage; what: string }) {
  return (
    <div class="damaged">
      <p>
        <DamagedMark damaged={props.damaged} /> This {props.what} cannot be read: {props.damaged.message}
      </p>
      <p class="muted">Restore the store (or that row) from a backup. Nothing can be decided on it until then.</p>
    </div>
  );
}
