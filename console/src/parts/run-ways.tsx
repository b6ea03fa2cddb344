/**
 * `why`'s ways out as buttons: each one is the control command the CLI prints for it, with a field
 * for what only a person can supply (a deny's reason, a signal's payload, edited arguments, a
 * step's result). A way the caller's role may not take is not shown; one with no command here (a
 * worker to start, events to follow) is said as text.
 */
import { useState } from "preact/hooks";
import { api } from "../api.js";
import { useAction } from "./action.js";
import { useMay } from "../me.js";
import { Link, navigate, path } from "../router.js";
import type { WayOut } from "./runs-api.js";
import { ErrorBox } from "./states.js";

const ACTION: Record<string, string> = {
  approve: "waits.approve",
  deny: "waits.deny",
  signal: "waits.signal",
  release: "holds.release",
  pause: "runs.pause",
  resume: "runs.resume",
  cancel: "runs.cancel",
  retry: "runs.retry",
  fork: "runs.fork",
};

const SUPPLY_LABEL: Record<string, string> = { input: "Edited arguments (JSON)", reason: "Reason", payload: "Payload (JSON)", result: "The step's result (JSON)" };
const JSON_SUPPLY = new Set(["input", "payload", "result"]);

export function WaysOut(props: { ways: WayOut[]; onDone: () => void }) {
  const may = useMay();
  const shown = props.ways.filter((w) => ACTION[w.verb] === undefined || may(ACTION[w.verb]!));
  if (shown.length === 0) return null;
  return (
    <ul class="ways-out">
      {shown.map((w, i) => (
        <li key={`${w.verb}-${i}`}>
          <Way way={w} onDone={props.onDone} />
        </li>
      ))}
    </ul>
  );
}

function Way(props: { way: WayOut; onDone: () => void }) {
  const w = props.way;
  const [supplied, setSupplied] = useState<Record<string, string>>({});
  const action = useAction();
  const { busy, error } = action;
  if (w.verb === "worker") {
    const module = typeof w.args.module === "string" ? w.args.module : null;
    return (
      <p>
        {w.what}: <code>{module ? `stead worker ${module}` : `a worker with the definition "${String(w.args.definition)}"`}</code>
      </p>
    );
  }
  if (w.verb === "why") return <Link href={path("runs", w.runId)}>{w.what}</Link>;
  if (w.verb === "events" || w.verb === "get") return <p class="muted">{w.what}: below.</p>;

  const take = () =>
    action.run(async () => {
      const value = (k: string): unknown => {
        const text = supplied[k];
        if (text === undefined || text.trim() === "") return undefined;
        if (!JSON_SUPPLY.has(k)) return text;
        try {
          return JSON.parse(text) as unknown;
        } catch {
          throw new Error(`${SUPPLY_LABEL[k] ?? k} is not JSON: write a JSON value such as {"key": "value"} or "text"`);
        }
      };
      const idempotencyKey = crypto.randomUUID();
      const wait = "wait" in w.args ? w.args.wait : "name" in w.args ? w.args.name : "";
      switch (w.verb) {
        case "approve": {
          const input = value("input");
          await api.runs.approve(w.runId, wait, { idempotencyKey, ...(w.args.scope === "run" ? { scope: "run" as const } : {}), ...(input === undefined ? {} : { input }) });
          break;
        }
        case "deny": {
          const reason = value("reason");
          await api.runs.deny(w.runId, wait, { idempotencyKey, ...(typeof reason === "string" ? { reason } : {}) });
          break;
        }
        case "signal":
          await api.runs.signal(w.runId, wait, value("payload") ?? null, { idempotencyKey });
          break;
        case "release": {
          const result = value("result");
          await api.runs.release(w.runId, { idempotencyKey, choice: w.args.choice, ...(typeof w.args.hold === "string" ? { hold: w.args.hold } : {}), ...(result === undefined ? {} : { result }) });
          break;
        }
        case "pause":
          await api.runs.pause(w.runId, { idempotencyKey });
          break;
        case "resume":
          await api.runs.resume(w.runId, { idempotencyKey });
          break;
        case "cancel":
          await api.runs.cancel(w.runId, { idempotencyKey });
          break;
        case "retry":
          await api.runs.retry(w.runId, { idempotencyKey });
          break;
        case "fork": {
          const r = await api.runs.fork(w.runId, { idempotencyKey });
          if (r.id) navigate(path("runs", r.id));
          break;
        }
        default:
          throw new Error(`the console does not know the way out "${w.verb}": use the CLI (stead why ${w.runId})`);
      }
      setSupplied({});
      props.onDone();
    });
  return (
    <form
      class="way"
      onSubmit={(e) => {
        e.preventDefault();
        void take();
      }}
    >
      {w.supply.map((k) =>
        JSON_SUPPLY.has(k) ? (
          <label key={k}>
            {SUPPLY_LABEL[k] ?? k}
            <textarea rows={2} value={supplied[k] ?? ""} onInput={(e) => setSupplied({ ...supplied, [k]: e.currentTarget.value })} />
          </label>
        ) : (
          <label key={k}>
            {SUPPLY_LABEL[k] ?? k}
            <input value={supplied[k] ?? ""} onInput={(e) => setSupplied({ ...supplied, [k]: e.currentTarget.value })} />
          </label>
        ),
      )}
      <button type="submit" class={w.verb === "cancel" || w.verb === "deny" ? "danger" : "primary"} disabled={busy}>
        {w.what}
      </button>
      {error ? <ErrorBox error={error} /> : null}
    </form>
  );
}
