/**
 * A person's decision on one approval: approve (this call only, or every call of the tool for the
 * rest of the run), deny with a reason, or approve edited arguments from the form generated from
 * the tool's schema. An edit the page finds invalid is not sent; one the server refuses
 * (STEAD_SCHEMA_MISMATCH) is shown at the fields it names, and the wait stays open. One
 * idempotency key per click; the buttons are disabled while a decision is in flight. A decision
 * made is handed to `onDone` as the server answered it (who decided, when), for the page to say.
 * A caller who may not decide gets no form; the page says once why (MayNotDecide).
 */
import { useMemo, useState } from "preact/hooks";
import type { OpenWait } from "../../../src/client/index.js";
import { api, problemOf } from "../api.js";
import { useMay, useMe, useSignIn } from "../me.js";
import { SchemaForm } from "./inbox-form.js";
import { toolRequest } from "./inbox-api.js";
import { fromDraft, serverErrors, toDraft, type Draft, type Errors } from "./inbox-schema.js";
import { decisionOf, type Decision } from "./inbox-decided.js";
import { ErrorBox } from "./states.js";

let forms = 0;

export function Decide(props: { wait: OpenWait; onDone: (d: Decision) => void }) {
  const may = useMay();
  const w = props.wait;
  const tool = toolRequest(w);
  const idBase = useMemo(() => `decide-${++forms}-`, []);
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState<Draft>(() => (tool ? toDraft(tool.inputSchema, tool.input) : { kind: "json", text: "" }));
  const [scope, setScope] = useState<"once" | "run">("once");
  const [reason, setReason] = useState("");
  const [errors, setErrors] = useState<Errors>({});
  const [busy, setBusy] = useState(false);
  const [refused, setRefused] = useState<unknown>(undefined);
  const canApprove = may("waits.approve");
  const canDeny = may("waits.deny");
  if (!canApprove && !canDeny) return null;

  const decide = async (approved: boolean) => {
    setRefused(undefined);
    let input: unknown;
    if (approved && editing && tool) {
      const read = fromDraft(tool.inputSchema, draft);
      setErrors(read.errors);
      if (!read.ok) return;
      input = read.value;
    } else setErrors({});
    setBusy(true);
    try {
      const idempotencyKey = crypto.randomUUID();
      const why = reason.trim() === "" ? {} : { reason: reason.trim() };
      const answer = approved
        ? await api.runs.approve(w.runId, w.name, { idempotencyKey, ...why, ...(tool ? { scope } : {}), ...(input === undefined ? {} : { input }) })
        : await api.runs.deny(w.runId, w.name, { idempotencyKey, ...why });
      props.onDone(decisionOf(answer, { runId: w.runId, wait: w.name, tool: tool?.tool, scope: tool && approved ? scope : undefined, edited: input !== undefined, reason: why.reason }, approved));
    } catch (e) {
      setRefused(e);
      const p = problemOf(e);
      if (p.code === "STEAD_SCHEMA_MISMATCH") setErrors(serverErrors(p.message));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      class="decide"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void decide(true);
      }}
    >
      {tool && canApprove ? (
        <>
          <fieldset class="scope">
            <legend>Approve for</legend>
            <label>
              <input type="radio" name={`${idBase}scope`} checked={scope === "once"} onChange={() => setScope("once")} /> this call only
            </label>
            <label>
              <input type="radio" name={`${idBase}scope`} checked={scope === "run"} onChange={() => setScope("run")} />{" "}
              <span>
                every call of <code>{tool.tool}</code> for the rest of this run
              </span>
            </label>
          </fieldset>
          <button type="button" aria-expanded={editing} onClick={() => setEditing(!editing)}>
            {editing ? "Keep the arguments as they are" : "Edit arguments"}
          </button>
          {editing ? (
            <div class="edit-args">
              <SchemaForm schema={tool.inputSchema} draft={draft} errors={errors} idBase={idBase} onChange={setDraft} />
            </div>
          ) : null}
        </>
      ) : null}
      <label class="reason">
        Reason (optional; recorded with the decision)
        <input value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
      </label>
      <div class="decide-buttons">
        {canApprove ? (
          <button type="submit" class="primary" disabled={busy}>
            {editing ? "Approve with these arguments" : "Approve"}
          </button>
        ) : null}
        {canDeny ? (
          <button type="button" class="danger" disabled={busy} onClick={() => void decide(false)}>
            Deny
          </button>
        ) : null}
      </div>
      {Object.keys(errors).length > 0 && !refused ? (
        <p class="field-error" role="alert">
          Not sent: fix the fields marked above.
        </p>
      ) : null}
      {refused ? <ErrorBox error={refused} /> : null}
    </form>
  );
}

/**
 * Said once on a page of approvals when the caller sees no decision buttons: reading anonymously
 * (signing in allows deciding), or a role that may only read. Nothing for a caller who may decide.
 */
export function MayNotDecide() {
  const may = useMay();
  const me = useMe();
  const signIn = useSignIn();
  if (may("waits.approve") || may("waits.deny")) return null;
  return (
    <p class="may-not">
      {me.name !== null ? (
        <>Your role ({me.role ?? "none"}) may read approvals but not decide them: an operator's or an admin's token may.</>
      ) : (
        <>
          You are reading anonymously: sign in with an operator's or an admin's token to approve or deny.{" "}
          <button type="button" onClick={signIn}>
            Sign in
          </button>
        </>
      )}
    </p>
  );
}
