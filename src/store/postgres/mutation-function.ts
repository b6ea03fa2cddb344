/**
 * Postgres's stead_apply_mutation, rendered from mutation/plan.ts: one piece of PL/pgSQL per check
 * and per write, run in the plan's order, so the function is SQLite's applyMutation in another
 * language rather than a second account of what a mutation means. From schema 12 a check that
 * fails returns its refusal ({ ok: false, reason, runId, status? }, as SQLite's applier reports it)
 * before any write, and success returns { ok: true, pauseRequested, wake }: stead_commit needs no
 * subtransaction to undo a refused mutation, which wrote nothing (commit-function.ts). Up to schema
 * 11 a check raised its refusal (the plan's reason as MESSAGE_TEXT, its SQLSTATE; the run's id in
 * HINT and, when the refusal reports it, the status in DETAIL), caught by a subtransaction per unit.
 * Each write is one statement, set-based over the mutation's JSON, its fields typed as the schema
 * description's columns they fill (schema/json-record.ts; events' are text and JSON, read as is).
 *
 * Invariant: one lock order for every writer: the run row first (FOR UPDATE, by the "run" check),
 * then the wait or hold row a check reads (FOR UPDATE too: a second writer waits, then rechecks
 * and finds it answered). A claim locks the run row too, so it cannot slip in between.
 *
 * Hazard: a released migration's text never changes (test/store.migrations-frozen.test.ts), and a
 * migration's text is this file's output for its version. Columns are rendered as of that version,
 * so a column added later leaves it alone; a piece changed or a phase added later must render the
 * same text as before for the versions already released (a piece is given the version, and
 * renders nothing below a version that adds it).
 */
import { CHECKS, WRITES, type CheckName, type WriteName } from "../mutation/plan.js";
import { snapshotsFromJson } from "../mutation/snapshot-write.js";
import { stepsFromJson } from "../mutation/step-write.js";
import { columnField, recordDef, recordset } from "../schema/json-record.js";
import { indexPredicate, PAYLOAD_FIELDS_VERSION, RETURNED_REFUSALS_VERSION } from "../schema/tables.js";

/** The first version whose stead_apply_mutation is rendered here (1 to 5 are frozen text in migrations.ts). */
export const FIRST_RENDERED_VERSION = 6;

/**
 * A check: `when`, whether the mutation asks for it (absent: always); `probe`, statements that
 * read what it judges; `fails`, the condition under which it refuses. A piece (of a check or a
 * write) is given the version it renders for; undefined: the phase is not in that version's
 * function (a phase added later, below its own version).
 */
interface CheckPiece {
  readonly when?: string;
  readonly probe?: string;
  readonly fails: string;
}

const IDEMPOTENCY_FIELDS = [...["verb", "scope", "key", "digest", "summary", "result", "actor"].map((c) => columnField("idempotency_keys", c)), { field: "ttlMs", type: "bigint" } as const];

const CHECK_SQL: Record<CheckName, (version: number) => CheckPiece | undefined> = {
  run: () => ({ probe: "SELECT status, fence, lease_owner, lost_claims, pause_requested INTO cur FROM runs WHERE id = rid FOR UPDATE;", fails: "NOT FOUND" }),
  openWait: () => ({
    when: "ex ? 'openWait'",
    probe: "PERFORM 1 FROM waits WHERE run_id = rid AND name = ex->>'openWait' AND status = 'open' FOR UPDATE;",
    fails: "NOT FOUND",
  }),
  openHold: () => ({
    when: "ex ? 'openHold'",
    probe: "PERFORM 1 FROM holds WHERE run_id = rid AND id = (ex->>'openHold')::bigint AND status = 'open' FOR UPDATE;",
    fails: "NOT FOUND",
  }),
  lease: () => ({
    when: "ex ? 'lease'",
    fails: "cur.fence <> (ex->'lease'->>'fence')::bigint OR cur.lease_owner IS DISTINCT FROM ex->'lease'->>'owner' OR cur.status <> 'running'",
  }),
  status: () => ({ when: "ex ? 'status'", fails: "NOT (ex->'status' ? cur.status)" }),
  // Recorded as it is checked: an unexpired key refuses; an expired one is replaced. The lease
  // clock (now_ms) is the database's.
  idempotency: () => ({
    when: "m ? 'idempotency'",
    probe: `INSERT INTO idempotency_keys (verb, scope, key, digest, summary, result, actor, created_at, expires_at)
  SELECT k."verb", k."scope", k."key", k."digest", k."summary", k."result", k."actor", now_ms, now_ms + k."ttlMs"
  FROM jsonb_to_record(m->'idempotency') AS k(${recordDef(IDEMPOTENCY_FIELDS)})
ON CONFLICT (verb, scope, key) DO UPDATE SET digest = excluded.digest, summary = excluded.summary, result = excluded.result,
  actor = excluded.actor, created_at = excluded.created_at, expires_at = excluded.expires_at
  WHERE idempotency_keys.expires_at <= excluded.created_at;
GET DIAGNOSTICS n = ROW_COUNT;`,
    fails: "n = 0",
  }),
};

const waitFields = (version: number) => ["name", "kind", "seq", "request", ...(version >= PAYLOAD_FIELDS_VERSION ? ["request_kind"] : []), "wake_at"].map((c) => columnField("waits", c));
const RESOLVE_FIELDS = [columnField("waits", "name"), columnField("waits", "status"), columnField("waits", "result"), columnField("waits", "resolved_by", "by")];
const HOLD_FIELDS = ["kind", "step_id", "seq", "reason", "details"].map((c) => columnField("holds", c));
const RELEASE_FIELDS = [columnField("holds", "id"), columnField("holds", "choice"), columnField("holds", "released_by", "by")];
const NEW_RUN_COLUMNS = ["id", "definition", "module", "fingerprint", "status", "input", "parent_id", "parent_step_id", "workspace", "created_at"] as const;
const NEW_RUN_FIELDS = [...NEW_RUN_COLUMNS.map((c) => columnField("runs", c)), { field: "journal", type: "jsonb" } as const];

/** Each write's statements, run when the mutation has the field of its name. */
const WRITE_SQL: Record<WriteName, (version: number) => string | undefined> = {
  // A step commit asks for lost_claims 0, almost always already so: a no-op update is skipped.
  run: (v) => `IF (p - 'lostClaims') <> '{}'::jsonb OR (p ? 'lostClaims' AND (p->>'lostClaims')::int <> cur.lost_claims) THEN
  UPDATE runs SET
    status = CASE WHEN p ? 'status' THEN p->>'status' ELSE status END,
    output = CASE WHEN p ? 'output' THEN p->>'output' ELSE output END,${v >= PAYLOAD_FIELDS_VERSION ? "\n    output_refs = CASE WHEN p ? 'outputRefs' THEN p->>'outputRefs' ELSE output_refs END," : ""}
    error = CASE WHEN p ? 'error' THEN p->>'error' ELSE error END,
    fingerprint = CASE WHEN p ? 'fingerprint' THEN p->>'fingerprint' ELSE fingerprint END,
    lost_claims = CASE WHEN p ? 'lostClaims' THEN (p->>'lostClaims')::int ELSE lost_claims END,
    pause_requested = CASE WHEN p ? 'pauseRequested' THEN (p->>'pauseRequested')::boolean ELSE pause_requested END,
    lease_owner = CASE WHEN coalesce((p->>'releaseLease')::boolean, false) THEN NULL ELSE lease_owner END,
    lease_expires_at = CASE WHEN coalesce((p->>'releaseLease')::boolean, false) THEN NULL ELSE lease_expires_at END,
    updated_at = now_ms
  WHERE id = rid;
END IF;
IF p->>'status' = 'pending' THEN wake := true; END IF;`,
  deleteStepsFrom: () => "DELETE FROM steps WHERE run_id = rid AND seq >= (m->>'deleteStepsFrom')::int;",
  steps: (v) => `${stepsFromJson("rid", "m->'steps'", "", v)};`,
  snapshots: (v) => `${snapshotsFromJson("rid", "m->'snapshots'", v)};`,
  waits: (v) =>
    v >= PAYLOAD_FIELDS_VERSION
      ? `INSERT INTO waits (run_id, name, kind, status, seq, request, request_kind, wake_at, created_at)
  SELECT rid, x."name", x."kind", 'open', x."seq", x."request", x."requestKind", x."wakeAt", now_ms
  FROM ${recordset("m->'waits'", waitFields(v))}
ON CONFLICT (run_id, name) DO UPDATE SET kind = excluded.kind, status = 'open', seq = excluded.seq, request = excluded.request,
  request_kind = excluded.request_kind, wake_at = excluded.wake_at, result = NULL, resolved_at = NULL, resolved_by = NULL;`
      : `INSERT INTO waits (run_id, name, kind, status, seq, request, wake_at, created_at)
  SELECT rid, x."name", x."kind", 'open', x."seq", x."request", x."wakeAt", now_ms
  FROM ${recordset("m->'waits'", waitFields(v))}
ON CONFLICT (run_id, name) DO UPDATE SET kind = excluded.kind, status = 'open', seq = excluded.seq, request = excluded.request,
  wake_at = excluded.wake_at, result = NULL, resolved_at = NULL, resolved_by = NULL;`,
  reopenWaits: () => `UPDATE waits SET status = 'open', result = NULL, resolved_at = NULL, resolved_by = NULL
  WHERE run_id = rid AND status = 'cancelled' AND name IN (SELECT jsonb_array_elements_text(m->'reopenWaits'));`,
  // An open wait is resolved once: a second entry for the same wait finds it answered (the first wins).
  resolveWaits: () => `WITH x AS (
  SELECT DISTINCT ON (x."name") x.* FROM ${recordset("m->'resolveWaits'", RESOLVE_FIELDS, "x", true)} ORDER BY x."name", x.i
), w AS (
  UPDATE waits SET status = x."status", result = x."result", resolved_at = now_ms, resolved_by = x."by"
    FROM x WHERE waits.run_id = rid AND waits.name = x."name" AND waits.status = 'open'
    RETURNING waits.seq, x."status", x."result"
)
UPDATE steps SET status = 'completed', output = w."result", completed_at = now_ms
  FROM w WHERE steps.run_id = rid AND steps.seq = w.seq AND w."status" = 'resolved';`,
  holds: () => `INSERT INTO holds (run_id, kind, step_id, seq, reason, details, status, created_at)
  SELECT rid, x."kind", x."stepId", x."seq", x."reason", x."details", 'open', now_ms
  FROM ${recordset("m->'holds'", HOLD_FIELDS, "x", true)} ORDER BY x.i;`,
  releaseHolds: () => `UPDATE holds SET status = 'released', choice = x."choice", released_at = now_ms, released_by = x."by"
  FROM ${recordset("m->'releaseHolds'", RELEASE_FIELDS)}
  WHERE holds.run_id = rid AND holds.id = x."id" AND holds.status = 'open';`,
  // An id that already exists is a retry of the same creation: that run is left as it is, its
  // journal and workspace included (as is a second entry of one id: the first wins).
  newRuns: (v) => `WITH asked AS (
  SELECT DISTINCT ON (x."id") x.* FROM ${recordset("m->'newRuns'", NEW_RUN_FIELDS, "x", true)} ORDER BY x."id", x.i
), created AS (
  INSERT INTO runs (${NEW_RUN_COLUMNS.join(", ")}, updated_at)
    SELECT asked."id", asked."definition", asked."module", asked."fingerprint", coalesce(asked."status", 'pending'), asked."input", asked."parentId", asked."parentStepId",
           asked."workspace", asked."createdAt", asked."createdAt"
    FROM asked
  ON CONFLICT (id) DO NOTHING
  RETURNING id, status
), journal_rows AS (
  ${stepsFromJson("created.id", `coalesce(asked."journal", '[]'::jsonb)`, "created JOIN asked ON asked.\"id\" = created.id", v)}
)
SELECT wake OR coalesce(bool_or(created.status = 'pending'), false) INTO wake FROM created;`,
  // As the step fast path writes them: the fields need no typing (text and JSON), and a
  // recordset here measured slower on a W2-shaped batch than the elements themselves.
  events: () => `INSERT INTO events (run_id, type, at, data)
  SELECT rid, e->>'type', now_ms, coalesce(e->'data', '{}'::jsonb)::text
  FROM jsonb_array_elements(m->'events') WITH ORDINALITY AS t(e, i) ORDER BY i;`,
  // The predicate is events_compactable's, so the partial index serves it.
  deleteEvents: () => `DELETE FROM events WHERE run_id = rid AND ${indexPredicate("events", "events_compactable")}
  AND data::jsonb->>'step' = m->'deleteEvents'->>'step' AND (data::jsonb->>'attempt')::int = (m->'deleteEvents'->>'attempt')::int;`,
};

/** `text` with every line indented by `spaces`. */
const indent = (text: string, spaces: number): string =>
  text
    .split("\n")
    .map((line) => " ".repeat(spaces) + line)
    .join("\n");

const guarded = (when: string | undefined, body: string): string => (when === undefined ? indent(body, 4) : `${indent(`IF ${when} THEN`, 4)}\n${indent(body, 6)}\n${indent("END IF;", 4)}`);

/** What a failed check does as of `version`: return its refusal (from 12) or raise it. */
export function refusalSql(c: (typeof CHECKS)[number], version: number): string {
  if (version >= RETURNED_REFUSALS_VERSION) return `RETURN jsonb_build_object('ok', false, 'reason', '${c.reason}', 'runId', rid${c.reportsStatus ? ", 'status', cur.status" : ""});`;
  return `RAISE EXCEPTION '${c.reason}' USING ERRCODE = '${c.sqlstate}', HINT = rid${c.reportsStatus ? ", DETAIL = cur.status" : ""};`;
}

function checkSql(c: (typeof CHECKS)[number], version: number): string {
  const piece = CHECK_SQL[c.name](version);
  if (piece === undefined) return "";
  const refuse = `IF ${piece.fails} THEN ${refusalSql(c, version)} END IF;`;
  return `    -- check ${c.name}\n${guarded(piece.when, piece.probe === undefined ? refuse : `${piece.probe}\n${refuse}`)}\n`;
}

function writeSql(w: (typeof WRITES)[number], version: number): string {
  const body = WRITE_SQL[w.name](version);
  return body === undefined ? "" : `    -- write ${w.name}\n${guarded(`m ? '${w.name}'`, body)}\n`;
}

/** The function's body (what pg_proc.prosrc holds once it is installed) as of schema `version`. */
export function applyMutationBody(version: number): string {
  if (!Number.isInteger(version) || version < FIRST_RENDERED_VERSION) throw new Error(`stead_apply_mutation is rendered from version ${FIRST_RENDERED_VERSION}; ${version} is frozen text in migrations.ts`);
  return `
  DECLARE
    rid text := m->>'runId';
    ex jsonb := coalesce(m->'expect', '{}'::jsonb);
    p jsonb := coalesce(m->'run', '{}'::jsonb);
    cur record;
    wake boolean := false;
    n integer;
  BEGIN
${CHECKS.map((c) => checkSql(c, version)).join("")}
${WRITES.map((w) => writeSql(w, version)).join("")}
    RETURN jsonb_build_object(${version >= RETURNED_REFUSALS_VERSION ? "'ok', true, " : ""}'pauseRequested', CASE WHEN p ? 'pauseRequested' THEN (p->>'pauseRequested')::boolean ELSE cur.pause_requested END, 'wake', wake);
  END
  `;
}

/** The statement that installs the function of schema `version`, replacing the one before it. */
export const applyMutationFunctionSql = (version: number): string =>
  `CREATE OR REPLACE FUNCTION stead_apply_mutation(m jsonb, now_ms bigint) RETURNS jsonb LANGUAGE plpgsql AS $$${applyMutationBody(version)}$$;`;
