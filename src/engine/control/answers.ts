import { SteadError } from "../../errors.js";
import type { Commits, IdempotencyKeys, RunReads, WaitRow } from "../../store/types.js";
import { onceByKey, sameArgs, type Replayable } from "./idempotency.js";
import { encodePayload } from "../payload.js";
import { requestKindOf, resolveWaitUnit } from "../runs/waits.js";
import { atText, byText, commitOne, keyed, raced, requireRun, type ControlCall } from "./common.js";
import type { Decision, DecisionRules, FieldValues } from "./decision-rules.js";
import type { DecisionResult, SignalResult } from "../../client/api-types.js";

export type { DecisionResult, SignalResult } from "../../client/api-types.js";

/** Answers to what a run waits for: approvals (approve, deny) and signals. */

export type { Decision };

/**
 * The run's waits and the one named. The run row is read only when no wait has the name (is there
 * such a run at all?): an answer's usual path needs the wait alone, and the commit's own checks
 * (the wait still open, the run still waiting) guard what happened since.
 */
async function waitOf(store: Commits & IdempotencyKeys & RunReads, runId: string, name: string): Promise<{ waits: WaitRow[]; wait: WaitRow | undefined }> {
  const waits = await store.waits(runId);
  const wait = waits.find((x) => x.name === name);
  if (!wait) await requireRun(store, runId);
  return { waits, wait };
}

async function notWaiting(store: Commits & IdempotencyKeys & RunReads, runId: string, name: string, kind: string, waits: WaitRow[]): Promise<SteadError> {
  const { status } = await requireRun(store, runId);
  const open = waits.filter((x) => x.status === "open");
  const list = open.length ? open.map((x) => `${x.kind} "${x.name}"`).join(", ") : "nothing";
  return new SteadError("STEAD_WAIT_NOT_FOUND", `run ${runId} (${status}) is not waiting for ${kind} "${name}"; it waits for ${list}`, {
    runId,
    wait: name,
    fix: `see what it waits for with \`stead why ${runId}\``,
  });
}

interface Recorded extends Record<string, unknown> {
  approved?: unknown;
  by?: unknown;
  at?: unknown;
}

function recordedOf(w: WaitRow): Recorded {
  try {
    return (JSON.parse(w.result ?? "null") as Recorded | null) ?? {};
  } catch {
    return {};
  }
}

/**
 * A decision already recorded on this approval: the same one again succeeds (`already`); another
 * is refused naming who decided what, and when. Undefined: the approval is not decided.
 */
function decidedAlready(runId: string, name: string, approved: boolean, fields: FieldValues, rules: DecisionRules, w: WaitRow | undefined): Replayable<DecisionResult> | undefined {
  if (!w || w.kind !== "approval" || w.status !== "resolved") return undefined;
  const rec = recordedOf(w);
  const same = rec.approved === approved && rules.same(rec, fields);
  const by = typeof rec.by === "string" ? rec.by : w.resolvedBy;
  const at = typeof rec.at === "number" ? rec.at : (w.resolvedAt ?? 0);
  if (same) return { runId, wait: name, approved, by, at, already: true };
  const what = rules.describe(rec);
  throw new SteadError("STEAD_INVALID_STATE", `"${name}" on run ${runId} was already ${what}${byText(by)}${atText(at)}; a decision stands once made`, {
    runId,
    wait: name,
    fix: `see what the run did with it: stead why ${runId}`,
  });
}

/** What every decision has besides its rules' fields: who, why, and the call's own idempotency key. */
const OWN_FIELDS = new Set(["by", "reason", "idempotencyKey"]);

/**
 * The fields of `d` the rules read. A field they do not read is refused, not dropped: an edit
 * silently ignored would approve a call the person meant to change.
 */
function fieldsOf(runId: string, name: string, d: Decision, rules: DecisionRules): FieldValues {
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(d)) {
    if (OWN_FIELDS.has(k) || v === undefined) continue;
    if (!rules.fields.includes(k)) {
      throw new SteadError("STEAD_BAD_OPTION", `a decision on "${name}" (run ${runId}) cannot carry "${k}": this instance reads ${rules.fields.length ? rules.fields.map((f) => `"${f}"`).join(", ") : "no fields"} beyond by and reason`, {
        runId,
        wait: name,
        fix: "decide with by and reason only, or through an instance made by createStead(), which reads an agent's tool approvals",
      });
    }
    fields[k] = v;
  }
  return fields;
}

export async function decide(call: ControlCall<Commits & IdempotencyKeys & RunReads>, runId: string, name: string, approved: boolean, d: Decision = {}): Promise<Replayable<DecisionResult>> {
  const { store, limit, key, rules } = call;
  const fields = fieldsOf(runId, name, d, rules);
  const args = { wait: name, approved, reason: d.reason ?? null, ...fields };
  return onceByKey<DecisionResult>(store, keyed(key, approved ? "approve" : "deny", runId, args, d.by ?? null), async (keyWrite) => {
    const { waits, wait } = await waitOf(store, runId, name);
    const already = decidedAlready(runId, name, approved, fields, rules, wait);
    if (already) return already;
    if (!wait || wait.status !== "open" || wait.kind !== "approval") throw await notWaiting(store, runId, name, "approval", waits);
    const at = Date.now();
    const own = rules.check({ runId, name, request: wait.request, requestKind: requestKindOf(wait), approved, fields });
    const result = encodePayload({ approved, by: d.by ?? null, reason: d.reason ?? null, at, ...own.recorded }, `the decision on "${name}"`, limit, { runId, stepId: name }) ?? "null";
    const outcome: DecisionResult = { runId, wait: name, approved, by: d.by ?? null, at };
    const unit = resolveWaitUnit(runId, wait, result, d.by ?? null, {
      type: approved ? "approval.approved" : "approval.denied",
      data: { wait: name, by: d.by ?? null, reason: d.reason ?? null, ...own.event },
    });
    if (unit[0] && keyWrite) unit[0].idempotency = keyWrite(outcome);
    const r = await commitOne(store, unit);
    if (!r.ok) {
      // Another decision landed first: the same one is this one's too; another is refused by name.
      const again = decidedAlready(runId, name, approved, fields, rules, (await waitOf(store, runId, name)).wait);
      if (again) return again;
      throw raced(runId, r, `deciding "${name}"`);
    }
    return { ...outcome, already: false };
  });
}

function signalledAlready(runId: string, name: string, payload: unknown, w: WaitRow | undefined): Replayable<SignalResult> | undefined {
  if (!w || w.kind !== "signal" || w.status !== "resolved") return undefined;
  let recorded: unknown;
  try {
    recorded = JSON.parse(w.result ?? "null");
  } catch {
    recorded = w.result;
  }
  if (sameArgs(recorded, payload)) return { runId, wait: name, by: w.resolvedBy, at: w.resolvedAt ?? 0, already: true };
  throw new SteadError("STEAD_INVALID_STATE", `signal "${name}" of run ${runId} was already delivered${byText(w.resolvedBy)}${atText(w.resolvedAt)}, with another payload`, {
    runId,
    wait: name,
    fix: `a signal is delivered once; see what the run did with it: stead why ${runId}`,
  });
}

export async function signal(call: ControlCall<Commits & IdempotencyKeys & RunReads>, runId: string, name: string, payload: unknown): Promise<Replayable<SignalResult>> {
  const { store, limit, by, key } = call;
  return onceByKey<SignalResult>(store, keyed(key, "signal", runId, { wait: name, payload }, by), async (keyWrite) => {
    const { waits, wait } = await waitOf(store, runId, name);
    const already = signalledAlready(runId, name, payload, wait);
    if (already) return already;
    if (!wait || wait.status !== "open" || wait.kind !== "signal") throw await notWaiting(store, runId, name, "signal", waits);
    const result = encodePayload(payload, `signal "${name}"`, limit, { runId, stepId: name }) ?? "null";
    const outcome: SignalResult = { runId, wait: name, by, at: Date.now() };
    const unit = resolveWaitUnit(runId, wait, result, by, { type: "signal.received", data: { wait: name, by } });
    if (unit[0] && keyWrite) unit[0].idempotency = keyWrite(outcome);
    const r = await commitOne(store, unit);
    if (!r.ok) {
      const again = signalledAlready(runId, name, payload, (await waitOf(store, runId, name)).wait);
      if (again) return again;
      throw raced(runId, r, `delivering signal "${name}"`);
    }
    return { ...outcome, already: false };
  });
}
