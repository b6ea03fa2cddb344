/**
 * A hold's ways out, as the run's `why` lists them: each release choice offered for a hold of its
 * kind (retry, skip, a supplied result, accepting a changed definition), and fork where why offers
 * it. A supplied result is written in a JSON editor and must parse before it is sent. A choice the
 * caller's role may not take is not shown. One idempotency key per click.
 */
import { useState } from "preact/hooks";
import type { HoldView, ReleaseChoice } from "../../../src/client/index.js";
import { api } from "../api.js";
import { useAction } from "./action.js";
import { useLiveTick } from "../live.js";
import { useMay } from "../me.js";
import { navigate, path } from "../router.js";
import { useLoad } from "./load.js";
import { runHead, type WayOut } from "./runs-api.js";
import { ErrorBox, Loading } from "./states.js";

const LABEL: Record<string, string> = { retry: "Retry", skip: "Skip", result: "Supply the result", "accept-change": "Accept the changed definition" } satisfies Record<ReleaseChoice, string>;

export function HoldChoices(props: { hold: HoldView; onDone: () => void }) {
  const h = props.hold;
  const may = useMay();
  // The run's why, re-read when that run changes (not on every event of the store).
  const tick = useLiveTick((e) => e.runId === h.runId && e.type !== "model.delta");
  const head = useLoad(() => runHead(h.runId), [h.runId, tick]);
  if (!may("holds.release") && !may("runs.fork")) return null;
  if (head.value === undefined) return head.error ? <ErrorBox error={head.error} retry={head.reload} /> : <Loading what="its ways out" />;
  const ways = (head.value.why.waysOut ?? []).filter((w) => (w.verb === "release" && w.args.hold === h.kind && may("holds.release")) || (w.verb === "fork" && may("runs.fork")));
  if (ways.length === 0) return <p class="muted">The run offers no way out of this hold now (see its page).</p>;
  return (
    <ul class="ways-out hold-choices">
      {ways.map((w, i) => (
        <li key={`${w.verb}-${String("choice" in w.args ? w.args.choice : undefined)}-${i}`}>
          <Choice hold={h} way={w} onDone={props.onDone} />
        </li>
      ))}
    </ul>
  );
}

function Choice(props: { hold: HoldView; way: WayOut; onDone: () => void }) {
  const { hold: h, way: w } = props;
  const choice = "choice" in w.args ? w.args.choice : "";
  const supplies = w.verb === "release" && w.supply.includes("result");
  const [text, setText] = useState("");
  const [bad, setBad] = useState<string | undefined>(undefined);
  const action = useAction();
  const { busy, error } = action;
  const fieldId = `hold-${h.id}-result`;

  const take = async () => {
    action.clear();
    let result: unknown;
    if (supplies) {
      if (text.trim() === "") return setBad('write the step\'s result as JSON, e.g. {"receipt": "r-1"}');
      try {
        result = JSON.parse(text) as unknown;
      } catch (e) {
        return setBad(`not JSON: ${e instanceof Error ? e.message : String(e)}; nothing was sent`);
      }
    }
    setBad(undefined);
    await action.run(async () => {
      const idempotencyKey = crypto.randomUUID();
      if (w.verb === "fork") {
        const r = await api.runs.fork(h.runId, { idempotencyKey });
        if (typeof r.id === "string") navigate(path("runs", r.id));
        return;
      }
      await api.runs.release(h.runId, { idempotencyKey, choice: choice as "retry", hold: h.kind, ...(supplies ? { result } : {}) });
      props.onDone();
    });
  };

  return (
    <form
      class="way"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void take();
      }}
    >
      <p class="muted">{w.what}</p>
      {supplies ? (
        <div class="schema-field">
          <label for={fieldId}>The step's result (JSON)</label>
          <textarea id={fieldId} rows={4} value={text} spellcheck={false} aria-invalid={bad ? true : undefined} aria-describedby={bad ? `${fieldId}-error` : undefined} onInput={(e) => setText(e.currentTarget.value)} />
          {bad ? (
            <span class="field-error" id={`${fieldId}-error`} role="alert">
              {bad}
            </span>
          ) : null}
        </div>
      ) : null}
      <button type="submit" class={choice === "skip" ? "danger" : "primary"} disabled={busy}>
        {w.verb === "fork" ? "Fork as a new run" : (LABEL[choice] ?? choice)}
      </button>
      {error ? <ErrorBox error={error} /> : null}
    </form>
  );
}
