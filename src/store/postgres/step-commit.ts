/**
 * Postgres's one specialised write path: the commit almost every step makes, as one statement
 * (its commonest shape, one step and its event, with scalar parameters; others with JSON arrays).
 * test/store.mutation-paths.test.ts proves both equal to the general path (stead_commit_logged) on
 * every shape `simpleStepWrite` accepts: same rows, same events, same refusals.
 */
import type { StepWrite, Unit } from "../types.js";
import { stepFromParams, stepParams, stepsFromJson } from "../mutation/step-write.js";

/**
 * The write almost every step makes: under its lease, journal rows, events, and lost_claims back to
 * 0. It has its own statement (STEP_COMMIT_SQL) with exactly stead_apply_mutation's semantics for
 * this shape, minus the PL/pgSQL and JSON-unit overhead. Anything else takes stead_commit_logged.
 */
export interface SimpleStepWrite {
  runId: string;
  fence: number;
  owner: string;
  steps: unknown[];
  events: unknown[];
  lostClaims: number | null;
}

const SIMPLE_KEYS = new Set(["runId", "expect", "run", "steps", "events"]);

export function simpleStepWrite(unit: Unit | undefined): SimpleStepWrite | undefined {
  const m = unit?.length === 1 ? unit[0] : undefined;
  if (!m || m.optional || !m.expect?.lease) return undefined;
  if (Object.keys(m).some((k) => !SIMPLE_KEYS.has(k) && (m as unknown as Record<string, unknown>)[k] !== undefined)) return undefined;
  const ex = m.expect;
  const lease = ex.lease;
  if (!lease || ex.status !== undefined || ex.openWait !== undefined || ex.openHold !== undefined) return undefined;
  const patch = m.run ?? {};
  if (Object.keys(patch).some((k) => k !== "lostClaims" && (patch as Record<string, unknown>)[k] !== undefined)) return undefined;
  return {
    runId: m.runId,
    fence: lease.fence,
    owner: lease.owner,
    steps: (m.steps ?? []).map((st) => ({ ...st, output: st.output ?? null, error: st.error ?? null, completedAt: st.completedAt ?? null, checkpoint: st.checkpoint ?? null })),
    events: m.events ?? [],
    lostClaims: patch.lostClaims ?? null,
  };
}

/**
 * Data-modifying CTEs all run, on one snapshot; every write joins `r`, the run row locked FOR
 * UPDATE only if the lease (fence, owner, running) holds, so a fenced-out writer changes nothing
 * but the commit log that records its refusal. Parameters: $1 run, $2 fence, $3 owner, $6 commit
 * token, $7 lost claims; `steps` and `events` write the rest.
 */
const stepCommitSql = (steps: string, events: string): string => `
WITH r AS (
  SELECT id, pause_requested, lost_claims FROM runs
  WHERE id = $1 AND fence = $2 AND lease_owner = $3 AND status = 'running' FOR UPDATE
), u AS (
  UPDATE runs SET lost_claims = $7::int, updated_at = stead_now_ms()
  WHERE id = $1 AND $7::int IS NOT NULL AND EXISTS (SELECT 1 FROM r WHERE r.lost_claims <> $7::int)
), s AS (
  ${steps}
), e AS (
  ${events}
), res AS (
  SELECT CASE
    WHEN EXISTS (SELECT 1 FROM r) THEN jsonb_build_array(jsonb_build_object('ok', true, 'pauseRequested', (SELECT pause_requested FROM r)))
    WHEN EXISTS (SELECT 1 FROM runs WHERE id = $1) THEN jsonb_build_array(jsonb_build_object('ok', false, 'reason', 'lease', 'runId', $1::text, 'status', (SELECT status FROM runs WHERE id = $1)))
    ELSE jsonb_build_array(jsonb_build_object('ok', false, 'reason', 'missing', 'runId', $1::text))
  END AS r
), c AS (
  INSERT INTO stead_commits (token, results, at) SELECT $6, res.r::text, stead_now_ms() FROM res
)
SELECT res.r FROM res`;

/** Any number of steps ($4) and events ($5), each a JSON array. */
export const STEP_COMMIT_SQL = stepCommitSql(
  stepsFromJson("$1", "$4::jsonb", "r"),
  `INSERT INTO events (run_id, type, at, data)
  SELECT $1, x.e->>'type', stead_now_ms(), coalesce(x.e->'data', '{}'::jsonb)::text
  FROM r, jsonb_array_elements($5::jsonb) WITH ORDINALITY AS x(e, i) ORDER BY x.i`,
);

/** After $1…$7: stepParams's values but the run id, in its order. */
const FIRST_STEP_PARAM = 8;

/**
 * The commonest shape (one step, at most one event: a step and its completion) with every value a
 * parameter of its own: $4 the event's type (null: no event), $5 its data as JSON, $8… the step.
 * The server then parses no JSON array, and the client builds none. The event's data still passes
 * through jsonb, so its text is stored as the JSON path stores it.
 */
export const ONE_STEP_COMMIT_SQL = stepCommitSql(
  stepFromParams("$1", FIRST_STEP_PARAM, "r"),
  `INSERT INTO events (run_id, type, at, data)
  SELECT $1, $4::text, stead_now_ms(), coalesce($5::jsonb, '{}'::jsonb)::text FROM r WHERE $4::text IS NOT NULL`,
);

/** The statement and parameters of `w`'s commit under `token`: ONE_STEP_COMMIT_SQL when its shape allows. */
export function stepCommit(w: SimpleStepWrite, token: string): { name: string; text: string; values: unknown[] } {
  const [only, ...more] = w.steps;
  const [event, ...moreEvents] = w.events as ({ type?: unknown; data?: unknown } | undefined)[];
  if (only && more.length === 0 && moreEvents.length === 0 && (event === undefined || typeof event.type === "string")) {
    const values: unknown[] = [w.runId, w.fence, w.owner, event?.type ?? null, event?.data === undefined ? null : JSON.stringify(event.data), token, w.lostClaims];
    values.push(...stepParams(w.runId, only as StepWrite).slice(1));
    return { name: "stead_one_step_commit", text: ONE_STEP_COMMIT_SQL, values };
  }
  return { name: "stead_step_commit", text: STEP_COMMIT_SQL, values: [w.runId, w.fence, w.owner, JSON.stringify(w.steps), JSON.stringify(w.events), token, w.lostClaims] };
}
