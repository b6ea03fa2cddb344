/**
 * Postgres's one specialised write path: the commit almost every step makes, as one statement.
 * test/store.mutation-paths.test.ts proves it equal to the general path (stead_commit_logged) on
 * every shape `simpleStepWrite` accepts: same rows, same events, same refusals.
 */
import type { Unit } from "../types.js";
import { stepsFromJson } from "../mutation/step-write.js";

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
 * but the commit log that records its refusal.
 */
export const STEP_COMMIT_SQL = `
WITH r AS (
  SELECT id, pause_requested, lost_claims FROM runs
  WHERE id = $1 AND fence = $2 AND lease_owner = $3 AND status = 'running' FOR UPDATE
), u AS (
  UPDATE runs SET lost_claims = $7::int, updated_at = stead_now_ms()
  WHERE id = $1 AND $7::int IS NOT NULL AND EXISTS (SELECT 1 FROM r WHERE r.lost_claims <> $7::int)
), s AS (
  ${stepsFromJson("$1", "$4::jsonb", "r")}
), e AS (
  INSERT INTO events (run_id, type, at, data)
  SELECT $1, x.e->>'type', stead_now_ms(), coalesce(x.e->'data', '{}'::jsonb)::text
  FROM r, jsonb_array_elements($5::jsonb) WITH ORDINALITY AS x(e, i) ORDER BY x.i
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
