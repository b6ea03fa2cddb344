/**
 * Postgres's released migrations (1 to 10), frozen as the literal text each ran when it was
 * released (scripts/freeze-migrations.ts wrote this file). Never edit it: a store migrated by
 * that release ran exactly this; test/store.migrations-frozen.test.ts pins each one's digest.
 */
import type { Migration } from "../sql/migration-log.js";

export const RELEASED_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "core: runs, steps, waits, holds, events",
    sql: `
  CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    definition TEXT NOT NULL,
    module TEXT,
    fingerprint TEXT,
    status TEXT NOT NULL,
    input TEXT NOT NULL,
    output TEXT,
    error TEXT,
    parent_id TEXT,
    parent_step_id TEXT,
    fence BIGINT NOT NULL DEFAULT 0,
    lease_owner TEXT,
    lease_expires_at BIGINT,
    owner_host TEXT,
    owner_pid INTEGER,
    owner_start TEXT,
    lost_claims INTEGER NOT NULL DEFAULT 0,
    pause_requested BOOLEAN NOT NULL DEFAULT false,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  );
  CREATE INDEX runs_claimable ON runs (status, definition, created_at);
  CREATE INDEX runs_parent ON runs (parent_id) WHERE parent_id IS NOT NULL;

  CREATE TABLE steps (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    step_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    output TEXT,
    error TEXT,
    started_at BIGINT NOT NULL,
    completed_at BIGINT,
    PRIMARY KEY (run_id, seq)
  );

  CREATE TABLE waits (
    run_id TEXT NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    seq INTEGER NOT NULL,
    request TEXT,
    wake_at BIGINT,
    result TEXT,
    created_at BIGINT NOT NULL,
    resolved_at BIGINT,
    resolved_by TEXT,
    PRIMARY KEY (run_id, name)
  );
  CREATE INDEX waits_due ON waits (wake_at) WHERE status = 'open' AND kind = 'timer';

  CREATE TABLE holds (
    id BIGSERIAL PRIMARY KEY,
    run_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    step_id TEXT,
    seq INTEGER,
    reason TEXT NOT NULL,
    details TEXT NOT NULL,
    status TEXT NOT NULL,
    choice TEXT,
    created_at BIGINT NOT NULL,
    released_at BIGINT,
    released_by TEXT
  );
  CREATE INDEX holds_run ON holds (run_id, status);

  CREATE TABLE events (
    seq BIGSERIAL PRIMARY KEY,
    run_id TEXT NOT NULL,
    type TEXT NOT NULL,
    at BIGINT NOT NULL,
    data TEXT NOT NULL
  );
  CREATE INDEX events_run ON events (run_id, seq);

  -- The database's clock: lease expiry is judged by it, never by a worker's clock.
  CREATE FUNCTION stead_now_ms() RETURNS bigint LANGUAGE sql VOLATILE AS $$
    SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint
  $$;

  -- Preconditions fail with SQLSTATE ST001..ST005 (wait, hold, missing, lease, status); the run's
  -- id travels in HINT and its current status in DETAIL.
  CREATE FUNCTION stead_apply_mutation(m jsonb, now_ms bigint) RETURNS jsonb LANGUAGE plpgsql AS $$
  DECLARE
    rid text := m->>'runId';
    ex jsonb := coalesce(m->'expect', '{}'::jsonb);
    p jsonb := coalesce(m->'run', '{}'::jsonb);
    cur record;
    w record;
    x jsonb;
    pause boolean;
    wake boolean := false;
    n integer;
  BEGIN
    IF ex ? 'openWait' THEN
      PERFORM 1 FROM waits WHERE run_id = rid AND name = ex->>'openWait' AND status = 'open';
      IF NOT FOUND THEN RAISE EXCEPTION 'wait' USING ERRCODE = 'ST001', HINT = rid; END IF;
    END IF;
    IF ex ? 'openHold' THEN
      PERFORM 1 FROM holds WHERE run_id = rid AND id = (ex->>'openHold')::bigint AND status = 'open';
      IF NOT FOUND THEN RAISE EXCEPTION 'hold' USING ERRCODE = 'ST002', HINT = rid; END IF;
    END IF;
    SELECT status, fence, lease_owner, lost_claims, pause_requested INTO cur FROM runs WHERE id = rid FOR UPDATE;
    IF NOT FOUND THEN RAISE EXCEPTION 'missing' USING ERRCODE = 'ST003', HINT = rid; END IF;
    IF ex ? 'lease' AND (cur.fence <> (ex->'lease'->>'fence')::bigint
        OR cur.lease_owner IS DISTINCT FROM ex->'lease'->>'owner' OR cur.status <> 'running') THEN
      RAISE EXCEPTION 'lease' USING ERRCODE = 'ST004', HINT = rid, DETAIL = cur.status;
    END IF;
    IF ex ? 'status' AND NOT (ex->'status' ? cur.status) THEN
      RAISE EXCEPTION 'status' USING ERRCODE = 'ST005', HINT = rid, DETAIL = cur.status;
    END IF;

    -- A step commit asks for lost_claims 0, almost always already so: a no-op update is skipped.
    IF (p - 'lostClaims') <> '{}'::jsonb OR (p ? 'lostClaims' AND (p->>'lostClaims')::int <> cur.lost_claims) THEN
      UPDATE runs SET
        status = CASE WHEN p ? 'status' THEN p->>'status' ELSE status END,
        output = CASE WHEN p ? 'output' THEN p->>'output' ELSE output END,
        error = CASE WHEN p ? 'error' THEN p->>'error' ELSE error END,
        fingerprint = CASE WHEN p ? 'fingerprint' THEN p->>'fingerprint' ELSE fingerprint END,
        lost_claims = CASE WHEN p ? 'lostClaims' THEN (p->>'lostClaims')::int ELSE lost_claims END,
        pause_requested = CASE WHEN p ? 'pauseRequested' THEN (p->>'pauseRequested')::boolean ELSE pause_requested END,
        lease_owner = CASE WHEN coalesce((p->>'releaseLease')::boolean, false) THEN NULL ELSE lease_owner END,
        lease_expires_at = CASE WHEN coalesce((p->>'releaseLease')::boolean, false) THEN NULL ELSE lease_expires_at END,
        updated_at = now_ms
      WHERE id = rid;
    END IF;
    pause := CASE WHEN p ? 'pauseRequested' THEN (p->>'pauseRequested')::boolean ELSE cur.pause_requested END;
    IF p->>'status' = 'pending' THEN wake := true; END IF;

    IF m ? 'deleteStepsFrom' THEN
      DELETE FROM steps WHERE run_id = rid AND seq >= (m->>'deleteStepsFrom')::int;
    END IF;
    IF m ? 'steps' THEN
    INSERT INTO steps (run_id, seq, step_id, kind, status, attempt, output, error, started_at, completed_at)
      SELECT rid, (s->>'seq')::int, s->>'stepId', s->>'kind', s->>'status', (s->>'attempt')::int, s->>'output', s->>'error',
             (s->>'startedAt')::bigint, (s->>'completedAt')::bigint
      FROM jsonb_array_elements(m->'steps') AS s
    ON CONFLICT (run_id, seq) DO UPDATE SET step_id = excluded.step_id, kind = excluded.kind, status = excluded.status,
      attempt = excluded.attempt, output = excluded.output, error = excluded.error, completed_at = excluded.completed_at;
    END IF;

    IF m ? 'waits' THEN
    INSERT INTO waits (run_id, name, kind, status, seq, request, wake_at, created_at)
      SELECT rid, o->>'name', o->>'kind', 'open', (o->>'seq')::int, o->>'request', (o->>'wakeAt')::bigint, now_ms
      FROM jsonb_array_elements(coalesce(m->'waits', '[]'::jsonb)) AS o
    ON CONFLICT (run_id, name) DO UPDATE SET kind = excluded.kind, status = 'open', seq = excluded.seq, request = excluded.request,
      wake_at = excluded.wake_at, result = NULL, resolved_at = NULL, resolved_by = NULL;
    END IF;

    -- Resolving a wait also completes its journal step with the result as its output.
    IF m ? 'resolveWaits' THEN
    FOR x IN SELECT * FROM jsonb_array_elements(m->'resolveWaits') LOOP
      UPDATE waits SET status = x->>'status', result = x->>'result', resolved_at = now_ms, resolved_by = x->>'by'
        WHERE run_id = rid AND name = x->>'name' AND status = 'open'
        RETURNING seq INTO w;
      IF FOUND AND x->>'status' = 'resolved' THEN
        UPDATE steps SET status = 'completed', output = x->>'result', completed_at = now_ms WHERE run_id = rid AND seq = w.seq;
      END IF;
    END LOOP;
    END IF;

    IF m ? 'holds' THEN
    INSERT INTO holds (run_id, kind, step_id, seq, reason, details, status, created_at)
      SELECT rid, h->>'kind', h->>'stepId', (h->>'seq')::int, h->>'reason', h->>'details', 'open', now_ms
      FROM jsonb_array_elements(m->'holds') AS h;
    END IF;
    IF m ? 'releaseHolds' THEN
    UPDATE holds SET status = 'released', choice = r->>'choice', released_at = now_ms, released_by = r->>'by'
      FROM jsonb_array_elements(coalesce(m->'releaseHolds', '[]'::jsonb)) AS r
      WHERE holds.run_id = rid AND holds.id = (r->>'id')::bigint AND holds.status = 'open';
    END IF;

    IF m ? 'newRuns' THEN
    FOR x IN SELECT * FROM jsonb_array_elements(m->'newRuns') LOOP
      INSERT INTO runs (id, definition, module, fingerprint, status, input, parent_id, parent_step_id, created_at, updated_at)
        VALUES (x->>'id', x->>'definition', x->>'module', x->>'fingerprint', coalesce(x->>'status', 'pending'), x->>'input',
                x->>'parentId', x->>'parentStepId', (x->>'createdAt')::bigint, (x->>'createdAt')::bigint)
        ON CONFLICT (id) DO NOTHING;
      GET DIAGNOSTICS n = ROW_COUNT;
      IF n > 0 THEN
        wake := wake OR coalesce(x->>'status', 'pending') = 'pending';
        INSERT INTO steps (run_id, seq, step_id, kind, status, attempt, output, error, started_at, completed_at)
          SELECT x->>'id', (s->>'seq')::int, s->>'stepId', s->>'kind', s->>'status', (s->>'attempt')::int, s->>'output', s->>'error',
                 (s->>'startedAt')::bigint, (s->>'completedAt')::bigint
          FROM jsonb_array_elements(coalesce(x->'journal', '[]'::jsonb)) AS s;
      END IF;
    END LOOP;
    END IF;

    IF m ? 'events' THEN
    INSERT INTO events (run_id, type, at, data)
      SELECT rid, e->>'type', now_ms, coalesce(e->'data', '{}'::jsonb)::text
      FROM jsonb_array_elements(m->'events') WITH ORDINALITY AS t(e, i) ORDER BY i;
    END IF;

    RETURN jsonb_build_object('pauseRequested', pause, 'wake', wake);
  END
  $$;

  -- Applies units (arrays of mutations) in the caller's transaction; returns one result per unit.
  CREATE FUNCTION stead_commit(units jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
  DECLARE
    u jsonb;
    m jsonb;
    r jsonb;
    results jsonb := '[]'::jsonb;
    pause boolean;
    wake boolean := false;
    unit_wake boolean;
    now_ms bigint := stead_now_ms();
    msg text;
    hint text;
    detail text;
  BEGIN
    FOR u IN SELECT * FROM jsonb_array_elements(units) LOOP
      BEGIN
        pause := false;
        unit_wake := false;
        FOR m IN SELECT * FROM jsonb_array_elements(u) LOOP
          IF coalesce((m->>'optional')::boolean, false) THEN
            BEGIN
              r := stead_apply_mutation(m, now_ms);
              unit_wake := unit_wake OR (r->>'wake')::boolean;
            EXCEPTION WHEN SQLSTATE 'ST001' OR SQLSTATE 'ST002' OR SQLSTATE 'ST003' OR SQLSTATE 'ST004' OR SQLSTATE 'ST005' THEN
              NULL;
            END;
          ELSE
            r := stead_apply_mutation(m, now_ms);
            pause := pause OR (r->>'pauseRequested')::boolean;
            unit_wake := unit_wake OR (r->>'wake')::boolean;
          END IF;
        END LOOP;
        wake := wake OR unit_wake;
        results := results || jsonb_build_array(jsonb_build_object('ok', true, 'pauseRequested', pause));
      EXCEPTION WHEN SQLSTATE 'ST001' OR SQLSTATE 'ST002' OR SQLSTATE 'ST003' OR SQLSTATE 'ST004' OR SQLSTATE 'ST005' THEN
        GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT, detail = PG_EXCEPTION_DETAIL;
        results := results || jsonb_build_array(jsonb_strip_nulls(jsonb_build_object('ok', false, 'reason', msg, 'runId', hint, 'status', nullif(detail, ''))));
      END;
    END LOOP;
    -- NOTIFY is transactional: workers hear it only if this commit lands.
    IF wake THEN PERFORM pg_notify('stead_wake', ''); END IF;
    RETURN results;
  END
  $$;

  -- Each group commit's results, under a token the writer chose: when the reply to a COMMIT is
  -- lost with its connection, the writer reads back whether (and how) its transaction applied.
  CREATE TABLE stead_commits (
    token TEXT PRIMARY KEY,
    results TEXT NOT NULL,
    at BIGINT NOT NULL
  );

  CREATE FUNCTION stead_commit_logged(token text, units jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
  DECLARE
    r jsonb := stead_commit(units);
  BEGIN
    INSERT INTO stead_commits (token, results, at) VALUES (token, r::text, stead_now_ms());
    -- Tokens are read back within seconds of their commit; keep ten minutes of them.
    IF random() < 0.002 THEN
      DELETE FROM stead_commits WHERE at < stead_now_ms() - 600000;
    END IF;
    RETURN r;
  END
  $$;
`,
  },
  {
    version: 2,
    name: "sessions and turns; quota waits",
    sql: `
  ALTER TABLE runs ADD COLUMN session_id TEXT;
  ALTER TABLE runs ADD COLUMN turn INTEGER;
  -- One run per turn. createRun numbers turns under a per-session advisory lock; this is the last guard.
  CREATE UNIQUE INDEX runs_session_turn ON runs (session_id, turn) WHERE session_id IS NOT NULL;
  -- The claim's "an earlier turn is still open" probe; its predicate must stay word for word the
  -- one in sessions-sql.ts (TERMINAL_SQL), or the planner cannot prove the index applies.
  CREATE INDEX runs_session_open ON runs (session_id, turn)
    WHERE session_id IS NOT NULL AND status NOT IN ('completed', 'failed', 'cancelled');
  -- The sweeper's due waits: timers and quota parks.
  CREATE INDEX waits_wake ON waits (wake_at) WHERE status = 'open' AND kind IN ('timer', 'quota');
  DROP INDEX waits_due;

  -- A turn that ends makes the session's next turn claimable: wake the workers now rather than at
  -- their next poll. Every path that ends a run updates its status, so a trigger sees them all;
  -- NOTIFY is transactional, sent only if the ending commits.
  CREATE FUNCTION stead_turn_ended() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF EXISTS (SELECT 1 FROM runs WHERE session_id = NEW.session_id AND turn > NEW.turn) THEN
      PERFORM pg_notify('stead_wake', '');
    END IF;
    RETURN NULL;
  END
  $$;
  CREATE TRIGGER runs_turn_ended AFTER UPDATE OF status ON runs FOR EACH ROW
    WHEN (NEW.session_id IS NOT NULL AND NEW.status IN ('completed', 'failed', 'cancelled')
          AND OLD.status NOT IN ('completed', 'failed', 'cancelled'))
    EXECUTE FUNCTION stead_turn_ended();
`,
  },
  {
    version: 3,
    name: "workspaces: snapshots and content-addressed blobs",
    sql: `
  ALTER TABLE runs ADD COLUMN workspace TEXT;

  -- Content-addressed: hash (SHA-256 of the uncompressed bytes) names one content forever, so
  -- writers insert if absent and never update data. touched_at (database clock) spares a blob from
  -- gc while a capture that relies on it has not committed its snapshot.
  CREATE TABLE blobs (
    hash TEXT PRIMARY KEY,
    size BIGINT NOT NULL,
    touched_at BIGINT NOT NULL,
    data BYTEA NOT NULL
  );
  -- The data is compressed already: TOAST must not try again.
  ALTER TABLE blobs ALTER COLUMN data SET STORAGE EXTERNAL;

  CREATE TABLE snapshots (
    id BIGSERIAL PRIMARY KEY,
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    step_id TEXT,
    source TEXT NOT NULL,
    root TEXT NOT NULL,
    files INTEGER NOT NULL,
    bytes BIGINT NOT NULL,
    files_changed INTEGER NOT NULL,
    new_bytes BIGINT NOT NULL,
    notes TEXT,
    checkpoint TEXT,
    created_at BIGINT NOT NULL
  );
  CREATE INDEX snapshots_run ON snapshots (run_id, seq);
  -- One start/step snapshot per journal position; settle snapshots accumulate.
  CREATE UNIQUE INDEX snapshots_step ON snapshots (run_id, seq) WHERE source <> 'settle';

  -- The workspace parts of a batch, applied after stead_commit in the same transaction: snapshots
  -- of the units that applied (never on optional mutations: the store refuses those, since whether
  -- one applied is not reported), and the workspace column of runs created through newRuns (a
  -- newRuns entry whose id already existed is a retry of the same creation).
  CREATE FUNCTION stead_apply_workspace(units jsonb, results jsonb) RETURNS void LANGUAGE plpgsql AS $$
  DECLARE
    i integer := 0;
    u jsonb;
    m jsonb;
    x jsonb;
  BEGIN
    FOR u IN SELECT * FROM jsonb_array_elements(units) LOOP
      IF coalesce((results->i->>'ok')::boolean, false) THEN
        FOR m IN SELECT * FROM jsonb_array_elements(u) LOOP
          IF m ? 'snapshots' AND NOT coalesce((m->>'optional')::boolean, false) THEN
            INSERT INTO snapshots (run_id, seq, step_id, source, root, files, bytes, files_changed, new_bytes, notes, checkpoint, created_at)
              SELECT m->>'runId', (s->>'seq')::int, s->>'stepId', s->>'source', s->>'root', (s->>'files')::int, (s->>'bytes')::bigint,
                     (s->>'filesChanged')::int, (s->>'newBytes')::bigint, s->>'notes', s->>'checkpoint', (s->>'createdAt')::bigint
              FROM jsonb_array_elements(m->'snapshots') AS s
            ON CONFLICT (run_id, seq) WHERE source <> 'settle' DO UPDATE SET step_id = excluded.step_id, source = excluded.source,
              root = excluded.root, files = excluded.files, bytes = excluded.bytes, files_changed = excluded.files_changed,
              new_bytes = excluded.new_bytes, notes = excluded.notes, checkpoint = excluded.checkpoint, created_at = excluded.created_at;
          END IF;
          IF m ? 'newRuns' THEN
            FOR x IN SELECT * FROM jsonb_array_elements(m->'newRuns') LOOP
              IF x->>'workspace' IS NOT NULL THEN
                UPDATE runs SET workspace = x->>'workspace' WHERE id = x->>'id' AND workspace IS NULL;
              END IF;
            END LOOP;
          END IF;
        END LOOP;
      END IF;
      i := i + 1;
    END LOOP;
  END
  $$;

  CREATE FUNCTION stead_commit_workspace(token text, units jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
  DECLARE
    r jsonb := stead_commit_logged(token, units);
  BEGIN
    PERFORM stead_apply_workspace(units, r);
    RETURN r;
  END
  $$;
`,
  },
  {
    version: 4,
    name: "checkpoint metadata beside journal steps",
    sql: `
  ALTER TABLE steps ADD COLUMN checkpoint TEXT;

  -- Migration 1's function, with steps.checkpoint written wherever a step row is (a mutation's
  -- steps and a new run's journal): each write of a step sets it to the write's value, null when
  -- absent. Nothing else differs (both come from applyMutationSql in the store's source).
  CREATE OR REPLACE FUNCTION stead_apply_mutation(m jsonb, now_ms bigint) RETURNS jsonb LANGUAGE plpgsql AS $$
  DECLARE
    rid text := m->>'runId';
    ex jsonb := coalesce(m->'expect', '{}'::jsonb);
    p jsonb := coalesce(m->'run', '{}'::jsonb);
    cur record;
    w record;
    x jsonb;
    pause boolean;
    wake boolean := false;
    n integer;
  BEGIN
    IF ex ? 'openWait' THEN
      PERFORM 1 FROM waits WHERE run_id = rid AND name = ex->>'openWait' AND status = 'open';
      IF NOT FOUND THEN RAISE EXCEPTION 'wait' USING ERRCODE = 'ST001', HINT = rid; END IF;
    END IF;
    IF ex ? 'openHold' THEN
      PERFORM 1 FROM holds WHERE run_id = rid AND id = (ex->>'openHold')::bigint AND status = 'open';
      IF NOT FOUND THEN RAISE EXCEPTION 'hold' USING ERRCODE = 'ST002', HINT = rid; END IF;
    END IF;
    SELECT status, fence, lease_owner, lost_claims, pause_requested INTO cur FROM runs WHERE id = rid FOR UPDATE;
    IF NOT FOUND THEN RAISE EXCEPTION 'missing' USING ERRCODE = 'ST003', HINT = rid; END IF;
    IF ex ? 'lease' AND (cur.fence <> (ex->'lease'->>'fence')::bigint
        OR cur.lease_owner IS DISTINCT FROM ex->'lease'->>'owner' OR cur.status <> 'running') THEN
      RAISE EXCEPTION 'lease' USING ERRCODE = 'ST004', HINT = rid, DETAIL = cur.status;
    END IF;
    IF ex ? 'status' AND NOT (ex->'status' ? cur.status) THEN
      RAISE EXCEPTION 'status' USING ERRCODE = 'ST005', HINT = rid, DETAIL = cur.status;
    END IF;

    -- A step commit asks for lost_claims 0, almost always already so: a no-op update is skipped.
    IF (p - 'lostClaims') <> '{}'::jsonb OR (p ? 'lostClaims' AND (p->>'lostClaims')::int <> cur.lost_claims) THEN
      UPDATE runs SET
        status = CASE WHEN p ? 'status' THEN p->>'status' ELSE status END,
        output = CASE WHEN p ? 'output' THEN p->>'output' ELSE output END,
        error = CASE WHEN p ? 'error' THEN p->>'error' ELSE error END,
        fingerprint = CASE WHEN p ? 'fingerprint' THEN p->>'fingerprint' ELSE fingerprint END,
        lost_claims = CASE WHEN p ? 'lostClaims' THEN (p->>'lostClaims')::int ELSE lost_claims END,
        pause_requested = CASE WHEN p ? 'pauseRequested' THEN (p->>'pauseRequested')::boolean ELSE pause_requested END,
        lease_owner = CASE WHEN coalesce((p->>'releaseLease')::boolean, false) THEN NULL ELSE lease_owner END,
        lease_expires_at = CASE WHEN coalesce((p->>'releaseLease')::boolean, false) THEN NULL ELSE lease_expires_at END,
        updated_at = now_ms
      WHERE id = rid;
    END IF;
    pause := CASE WHEN p ? 'pauseRequested' THEN (p->>'pauseRequested')::boolean ELSE cur.pause_requested END;
    IF p->>'status' = 'pending' THEN wake := true; END IF;

    IF m ? 'deleteStepsFrom' THEN
      DELETE FROM steps WHERE run_id = rid AND seq >= (m->>'deleteStepsFrom')::int;
    END IF;
    IF m ? 'steps' THEN
    INSERT INTO steps (run_id, seq, step_id, kind, status, attempt, output, error, started_at, completed_at, checkpoint)
      SELECT rid, (s->>'seq')::int, s->>'stepId', s->>'kind', s->>'status', (s->>'attempt')::int, s->>'output', s->>'error',
             (s->>'startedAt')::bigint, (s->>'completedAt')::bigint, s->>'checkpoint'
      FROM jsonb_array_elements(m->'steps') AS s
    ON CONFLICT (run_id, seq) DO UPDATE SET step_id = excluded.step_id, kind = excluded.kind, status = excluded.status,
      attempt = excluded.attempt, output = excluded.output, error = excluded.error, completed_at = excluded.completed_at,
      checkpoint = excluded.checkpoint;
    END IF;

    IF m ? 'waits' THEN
    INSERT INTO waits (run_id, name, kind, status, seq, request, wake_at, created_at)
      SELECT rid, o->>'name', o->>'kind', 'open', (o->>'seq')::int, o->>'request', (o->>'wakeAt')::bigint, now_ms
      FROM jsonb_array_elements(coalesce(m->'waits', '[]'::jsonb)) AS o
    ON CONFLICT (run_id, name) DO UPDATE SET kind = excluded.kind, status = 'open', seq = excluded.seq, request = excluded.request,
      wake_at = excluded.wake_at, result = NULL, resolved_at = NULL, resolved_by = NULL;
    END IF;

    -- Resolving a wait also completes its journal step with the result as its output.
    IF m ? 'resolveWaits' THEN
    FOR x IN SELECT * FROM jsonb_array_elements(m->'resolveWaits') LOOP
      UPDATE waits SET status = x->>'status', result = x->>'result', resolved_at = now_ms, resolved_by = x->>'by'
        WHERE run_id = rid AND name = x->>'name' AND status = 'open'
        RETURNING seq INTO w;
      IF FOUND AND x->>'status' = 'resolved' THEN
        UPDATE steps SET status = 'completed', output = x->>'result', completed_at = now_ms WHERE run_id = rid AND seq = w.seq;
      END IF;
    END LOOP;
    END IF;

    IF m ? 'holds' THEN
    INSERT INTO holds (run_id, kind, step_id, seq, reason, details, status, created_at)
      SELECT rid, h->>'kind', h->>'stepId', (h->>'seq')::int, h->>'reason', h->>'details', 'open', now_ms
      FROM jsonb_array_elements(m->'holds') AS h;
    END IF;
    IF m ? 'releaseHolds' THEN
    UPDATE holds SET status = 'released', choice = r->>'choice', released_at = now_ms, released_by = r->>'by'
      FROM jsonb_array_elements(coalesce(m->'releaseHolds', '[]'::jsonb)) AS r
      WHERE holds.run_id = rid AND holds.id = (r->>'id')::bigint AND holds.status = 'open';
    END IF;

    IF m ? 'newRuns' THEN
    FOR x IN SELECT * FROM jsonb_array_elements(m->'newRuns') LOOP
      INSERT INTO runs (id, definition, module, fingerprint, status, input, parent_id, parent_step_id, created_at, updated_at)
        VALUES (x->>'id', x->>'definition', x->>'module', x->>'fingerprint', coalesce(x->>'status', 'pending'), x->>'input',
                x->>'parentId', x->>'parentStepId', (x->>'createdAt')::bigint, (x->>'createdAt')::bigint)
        ON CONFLICT (id) DO NOTHING;
      GET DIAGNOSTICS n = ROW_COUNT;
      IF n > 0 THEN
        wake := wake OR coalesce(x->>'status', 'pending') = 'pending';
        INSERT INTO steps (run_id, seq, step_id, kind, status, attempt, output, error, started_at, completed_at, checkpoint)
          SELECT x->>'id', (s->>'seq')::int, s->>'stepId', s->>'kind', s->>'status', (s->>'attempt')::int, s->>'output', s->>'error',
                 (s->>'startedAt')::bigint, (s->>'completedAt')::bigint, s->>'checkpoint'
          FROM jsonb_array_elements(coalesce(x->'journal', '[]'::jsonb)) AS s;
      END IF;
    END LOOP;
    END IF;

    IF m ? 'events' THEN
    INSERT INTO events (run_id, type, at, data)
      SELECT rid, e->>'type', now_ms, coalesce(e->'data', '{}'::jsonb)::text
      FROM jsonb_array_elements(m->'events') WITH ORDINALITY AS t(e, i) ORDER BY i;
    END IF;

    RETURN jsonb_build_object('pauseRequested', pause, 'wake', wake);
  END
  $$;
`,
  },
  {
    version: 5,
    name: "idempotency keys of control commands; compactable live events",
    sql: `
  -- One row per (verb, scope, key): a repeated command finds its first result here.
  CREATE TABLE idempotency_keys (
    verb TEXT NOT NULL,
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    digest TEXT NOT NULL,
    summary TEXT NOT NULL,
    result TEXT NOT NULL,
    actor TEXT,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (verb, scope, key)
  );
  CREATE INDEX idempotency_expiry ON idempotency_keys (expires_at);
  -- Live model text is deleted once its step is journaled (Mutation.deleteEvents): only the
  -- in-flight and cut-off ones are ever in this index.
  CREATE INDEX events_compactable ON events (run_id, seq) WHERE type = 'model.delta';

  -- Migration 4's function with idempotency keys, reopened waits and compacted events; and
  -- stead_commit catching the new precondition (ST006).
  CREATE OR REPLACE FUNCTION stead_apply_mutation(m jsonb, now_ms bigint) RETURNS jsonb LANGUAGE plpgsql AS $$
  DECLARE
    rid text := m->>'runId';
    ex jsonb := coalesce(m->'expect', '{}'::jsonb);
    p jsonb := coalesce(m->'run', '{}'::jsonb);
    cur record;
    w record;
    x jsonb;
    pause boolean;
    wake boolean := false;
    n integer;
  BEGIN
    SELECT status, fence, lease_owner, lost_claims, pause_requested INTO cur FROM runs WHERE id = rid FOR UPDATE;
    IF NOT FOUND THEN RAISE EXCEPTION 'missing' USING ERRCODE = 'ST003', HINT = rid; END IF;
    IF ex ? 'openWait' THEN
      PERFORM 1 FROM waits WHERE run_id = rid AND name = ex->>'openWait' AND status = 'open' FOR UPDATE;
      IF NOT FOUND THEN RAISE EXCEPTION 'wait' USING ERRCODE = 'ST001', HINT = rid; END IF;
    END IF;
    IF ex ? 'openHold' THEN
      PERFORM 1 FROM holds WHERE run_id = rid AND id = (ex->>'openHold')::bigint AND status = 'open' FOR UPDATE;
      IF NOT FOUND THEN RAISE EXCEPTION 'hold' USING ERRCODE = 'ST002', HINT = rid; END IF;
    END IF;
    IF ex ? 'lease' AND (cur.fence <> (ex->'lease'->>'fence')::bigint
        OR cur.lease_owner IS DISTINCT FROM ex->'lease'->>'owner' OR cur.status <> 'running') THEN
      RAISE EXCEPTION 'lease' USING ERRCODE = 'ST004', HINT = rid, DETAIL = cur.status;
    END IF;
    IF ex ? 'status' AND NOT (ex->'status' ? cur.status) THEN
      RAISE EXCEPTION 'status' USING ERRCODE = 'ST005', HINT = rid, DETAIL = cur.status;
    END IF;
    IF m ? 'idempotency' THEN
      INSERT INTO idempotency_keys (verb, scope, key, digest, summary, result, actor, created_at, expires_at)
        VALUES (m->'idempotency'->>'verb', m->'idempotency'->>'scope', m->'idempotency'->>'key', m->'idempotency'->>'digest',
                m->'idempotency'->>'summary', m->'idempotency'->>'result', m->'idempotency'->>'actor', now_ms,
                now_ms + (m->'idempotency'->>'ttlMs')::bigint)
      ON CONFLICT (verb, scope, key) DO UPDATE SET digest = excluded.digest, summary = excluded.summary, result = excluded.result,
        actor = excluded.actor, created_at = excluded.created_at, expires_at = excluded.expires_at
        WHERE idempotency_keys.expires_at <= excluded.created_at;
      GET DIAGNOSTICS n = ROW_COUNT;
      IF n = 0 THEN RAISE EXCEPTION 'idempotency' USING ERRCODE = 'ST006', HINT = rid, DETAIL = cur.status; END IF;
    END IF;

    -- A step commit asks for lost_claims 0, almost always already so: a no-op update is skipped.
    IF (p - 'lostClaims') <> '{}'::jsonb OR (p ? 'lostClaims' AND (p->>'lostClaims')::int <> cur.lost_claims) THEN
      UPDATE runs SET
        status = CASE WHEN p ? 'status' THEN p->>'status' ELSE status END,
        output = CASE WHEN p ? 'output' THEN p->>'output' ELSE output END,
        error = CASE WHEN p ? 'error' THEN p->>'error' ELSE error END,
        fingerprint = CASE WHEN p ? 'fingerprint' THEN p->>'fingerprint' ELSE fingerprint END,
        lost_claims = CASE WHEN p ? 'lostClaims' THEN (p->>'lostClaims')::int ELSE lost_claims END,
        pause_requested = CASE WHEN p ? 'pauseRequested' THEN (p->>'pauseRequested')::boolean ELSE pause_requested END,
        lease_owner = CASE WHEN coalesce((p->>'releaseLease')::boolean, false) THEN NULL ELSE lease_owner END,
        lease_expires_at = CASE WHEN coalesce((p->>'releaseLease')::boolean, false) THEN NULL ELSE lease_expires_at END,
        updated_at = now_ms
      WHERE id = rid;
    END IF;
    pause := CASE WHEN p ? 'pauseRequested' THEN (p->>'pauseRequested')::boolean ELSE cur.pause_requested END;
    IF p->>'status' = 'pending' THEN wake := true; END IF;

    IF m ? 'deleteStepsFrom' THEN
      DELETE FROM steps WHERE run_id = rid AND seq >= (m->>'deleteStepsFrom')::int;
    END IF;
    IF m ? 'steps' THEN
    INSERT INTO steps (run_id, seq, step_id, kind, status, attempt, output, error, started_at, completed_at, checkpoint)
      SELECT rid, (s->>'seq')::int, s->>'stepId', s->>'kind', s->>'status', (s->>'attempt')::int, s->>'output', s->>'error',
             (s->>'startedAt')::bigint, (s->>'completedAt')::bigint, s->>'checkpoint'
      FROM jsonb_array_elements(m->'steps') AS s
    ON CONFLICT (run_id, seq) DO UPDATE SET step_id = excluded.step_id, kind = excluded.kind, status = excluded.status,
      attempt = excluded.attempt, output = excluded.output, error = excluded.error, completed_at = excluded.completed_at,
      checkpoint = excluded.checkpoint;
    END IF;

    IF m ? 'waits' THEN
    INSERT INTO waits (run_id, name, kind, status, seq, request, wake_at, created_at)
      SELECT rid, o->>'name', o->>'kind', 'open', (o->>'seq')::int, o->>'request', (o->>'wakeAt')::bigint, now_ms
      FROM jsonb_array_elements(coalesce(m->'waits', '[]'::jsonb)) AS o
    ON CONFLICT (run_id, name) DO UPDATE SET kind = excluded.kind, status = 'open', seq = excluded.seq, request = excluded.request,
      wake_at = excluded.wake_at, result = NULL, resolved_at = NULL, resolved_by = NULL;
    END IF;

    -- A cancelled run resumed: the waits its cancellation closed are open again.
    IF m ? 'reopenWaits' THEN
      UPDATE waits SET status = 'open', result = NULL, resolved_at = NULL, resolved_by = NULL
        WHERE run_id = rid AND status = 'cancelled' AND name IN (SELECT jsonb_array_elements_text(m->'reopenWaits'));
    END IF;

    -- Resolving a wait also completes its journal step with the result as its output.
    IF m ? 'resolveWaits' THEN
    FOR x IN SELECT * FROM jsonb_array_elements(m->'resolveWaits') LOOP
      UPDATE waits SET status = x->>'status', result = x->>'result', resolved_at = now_ms, resolved_by = x->>'by'
        WHERE run_id = rid AND name = x->>'name' AND status = 'open'
        RETURNING seq INTO w;
      IF FOUND AND x->>'status' = 'resolved' THEN
        UPDATE steps SET status = 'completed', output = x->>'result', completed_at = now_ms WHERE run_id = rid AND seq = w.seq;
      END IF;
    END LOOP;
    END IF;

    IF m ? 'holds' THEN
    INSERT INTO holds (run_id, kind, step_id, seq, reason, details, status, created_at)
      SELECT rid, h->>'kind', h->>'stepId', (h->>'seq')::int, h->>'reason', h->>'details', 'open', now_ms
      FROM jsonb_array_elements(m->'holds') AS h;
    END IF;
    IF m ? 'releaseHolds' THEN
    UPDATE holds SET status = 'released', choice = r->>'choice', released_at = now_ms, released_by = r->>'by'
      FROM jsonb_array_elements(coalesce(m->'releaseHolds', '[]'::jsonb)) AS r
      WHERE holds.run_id = rid AND holds.id = (r->>'id')::bigint AND holds.status = 'open';
    END IF;

    IF m ? 'newRuns' THEN
    FOR x IN SELECT * FROM jsonb_array_elements(m->'newRuns') LOOP
      INSERT INTO runs (id, definition, module, fingerprint, status, input, parent_id, parent_step_id, created_at, updated_at)
        VALUES (x->>'id', x->>'definition', x->>'module', x->>'fingerprint', coalesce(x->>'status', 'pending'), x->>'input',
                x->>'parentId', x->>'parentStepId', (x->>'createdAt')::bigint, (x->>'createdAt')::bigint)
        ON CONFLICT (id) DO NOTHING;
      GET DIAGNOSTICS n = ROW_COUNT;
      IF n > 0 THEN
        wake := wake OR coalesce(x->>'status', 'pending') = 'pending';
        INSERT INTO steps (run_id, seq, step_id, kind, status, attempt, output, error, started_at, completed_at, checkpoint)
          SELECT x->>'id', (s->>'seq')::int, s->>'stepId', s->>'kind', s->>'status', (s->>'attempt')::int, s->>'output', s->>'error',
                 (s->>'startedAt')::bigint, (s->>'completedAt')::bigint, s->>'checkpoint'
          FROM jsonb_array_elements(coalesce(x->'journal', '[]'::jsonb)) AS s;
      END IF;
    END LOOP;
    END IF;

    IF m ? 'deleteEvents' THEN
      DELETE FROM events WHERE run_id = rid AND type = 'model.delta'
        AND data::jsonb->>'step' = m->'deleteEvents'->>'step' AND (data::jsonb->>'attempt')::int = (m->'deleteEvents'->>'attempt')::int;
    END IF;

    IF m ? 'events' THEN
    INSERT INTO events (run_id, type, at, data)
      SELECT rid, e->>'type', now_ms, coalesce(e->'data', '{}'::jsonb)::text
      FROM jsonb_array_elements(m->'events') WITH ORDINALITY AS t(e, i) ORDER BY i;
    END IF;

    RETURN jsonb_build_object('pauseRequested', pause, 'wake', wake);
  END
  $$;

  -- Applies units (arrays of mutations) in the caller's transaction; returns one result per unit.
  CREATE OR REPLACE FUNCTION stead_commit(units jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
  DECLARE
    u jsonb;
    m jsonb;
    r jsonb;
    results jsonb := '[]'::jsonb;
    pause boolean;
    wake boolean := false;
    unit_wake boolean;
    now_ms bigint := stead_now_ms();
    msg text;
    hint text;
    detail text;
  BEGIN
    FOR u IN SELECT * FROM jsonb_array_elements(units) LOOP
      BEGIN
        pause := false;
        unit_wake := false;
        FOR m IN SELECT * FROM jsonb_array_elements(u) LOOP
          IF coalesce((m->>'optional')::boolean, false) THEN
            BEGIN
              r := stead_apply_mutation(m, now_ms);
              unit_wake := unit_wake OR (r->>'wake')::boolean;
            EXCEPTION WHEN SQLSTATE 'ST001' OR SQLSTATE 'ST002' OR SQLSTATE 'ST003' OR SQLSTATE 'ST004' OR SQLSTATE 'ST005' OR SQLSTATE 'ST006' THEN
              NULL;
            END;
          ELSE
            r := stead_apply_mutation(m, now_ms);
            pause := pause OR (r->>'pauseRequested')::boolean;
            unit_wake := unit_wake OR (r->>'wake')::boolean;
          END IF;
        END LOOP;
        wake := wake OR unit_wake;
        results := results || jsonb_build_array(jsonb_build_object('ok', true, 'pauseRequested', pause));
      EXCEPTION WHEN SQLSTATE 'ST001' OR SQLSTATE 'ST002' OR SQLSTATE 'ST003' OR SQLSTATE 'ST004' OR SQLSTATE 'ST005' OR SQLSTATE 'ST006' THEN
        GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT, detail = PG_EXCEPTION_DETAIL;
        results := results || jsonb_build_array(jsonb_strip_nulls(jsonb_build_object('ok', false, 'reason', msg, 'runId', hint, 'status', nullif(detail, ''))));
      END;
    END LOOP;
    -- NOTIFY is transactional: workers hear it only if this commit lands.
    IF wake THEN PERFORM pg_notify('stead_wake', ''); END IF;
    RETURN results;
  END
  $$;
`,
  },
  {
    version: 6,
    name: "stead_apply_mutation rendered from the plan: snapshots and new runs' workspace inside each mutation",
    sql: `
  -- Written from the plan in the store's source (src/store/postgres/mutation-function.ts).
  CREATE OR REPLACE FUNCTION stead_apply_mutation(m jsonb, now_ms bigint) RETURNS jsonb LANGUAGE plpgsql AS $$
  DECLARE
    rid text := m->>'runId';
    ex jsonb := coalesce(m->'expect', '{}'::jsonb);
    p jsonb := coalesce(m->'run', '{}'::jsonb);
    cur record;
    wake boolean := false;
    n integer;
  BEGIN
    -- check run
    SELECT status, fence, lease_owner, lost_claims, pause_requested INTO cur FROM runs WHERE id = rid FOR UPDATE;
    IF NOT FOUND THEN RAISE EXCEPTION 'missing' USING ERRCODE = 'ST003', HINT = rid; END IF;
    -- check openWait
    IF ex ? 'openWait' THEN
      PERFORM 1 FROM waits WHERE run_id = rid AND name = ex->>'openWait' AND status = 'open' FOR UPDATE;
      IF NOT FOUND THEN RAISE EXCEPTION 'wait' USING ERRCODE = 'ST001', HINT = rid; END IF;
    END IF;
    -- check openHold
    IF ex ? 'openHold' THEN
      PERFORM 1 FROM holds WHERE run_id = rid AND id = (ex->>'openHold')::bigint AND status = 'open' FOR UPDATE;
      IF NOT FOUND THEN RAISE EXCEPTION 'hold' USING ERRCODE = 'ST002', HINT = rid; END IF;
    END IF;
    -- check lease
    IF ex ? 'lease' THEN
      IF cur.fence <> (ex->'lease'->>'fence')::bigint OR cur.lease_owner IS DISTINCT FROM ex->'lease'->>'owner' OR cur.status <> 'running' THEN RAISE EXCEPTION 'lease' USING ERRCODE = 'ST004', HINT = rid, DETAIL = cur.status; END IF;
    END IF;
    -- check status
    IF ex ? 'status' THEN
      IF NOT (ex->'status' ? cur.status) THEN RAISE EXCEPTION 'status' USING ERRCODE = 'ST005', HINT = rid, DETAIL = cur.status; END IF;
    END IF;
    -- check idempotency
    IF m ? 'idempotency' THEN
      INSERT INTO idempotency_keys (verb, scope, key, digest, summary, result, actor, created_at, expires_at)
        SELECT k."verb", k."scope", k."key", k."digest", k."summary", k."result", k."actor", now_ms, now_ms + k."ttlMs"
        FROM jsonb_to_record(m->'idempotency') AS k("verb" text, "scope" text, "key" text, "digest" text, "summary" text, "result" text, "actor" text, "ttlMs" bigint)
      ON CONFLICT (verb, scope, key) DO UPDATE SET digest = excluded.digest, summary = excluded.summary, result = excluded.result,
        actor = excluded.actor, created_at = excluded.created_at, expires_at = excluded.expires_at
        WHERE idempotency_keys.expires_at <= excluded.created_at;
      GET DIAGNOSTICS n = ROW_COUNT;
      IF n = 0 THEN RAISE EXCEPTION 'idempotency' USING ERRCODE = 'ST006', HINT = rid, DETAIL = cur.status; END IF;
    END IF;

    -- write run
    IF m ? 'run' THEN
      IF (p - 'lostClaims') <> '{}'::jsonb OR (p ? 'lostClaims' AND (p->>'lostClaims')::int <> cur.lost_claims) THEN
        UPDATE runs SET
          status = CASE WHEN p ? 'status' THEN p->>'status' ELSE status END,
          output = CASE WHEN p ? 'output' THEN p->>'output' ELSE output END,
          error = CASE WHEN p ? 'error' THEN p->>'error' ELSE error END,
          fingerprint = CASE WHEN p ? 'fingerprint' THEN p->>'fingerprint' ELSE fingerprint END,
          lost_claims = CASE WHEN p ? 'lostClaims' THEN (p->>'lostClaims')::int ELSE lost_claims END,
          pause_requested = CASE WHEN p ? 'pauseRequested' THEN (p->>'pauseRequested')::boolean ELSE pause_requested END,
          lease_owner = CASE WHEN coalesce((p->>'releaseLease')::boolean, false) THEN NULL ELSE lease_owner END,
          lease_expires_at = CASE WHEN coalesce((p->>'releaseLease')::boolean, false) THEN NULL ELSE lease_expires_at END,
          updated_at = now_ms
        WHERE id = rid;
      END IF;
      IF p->>'status' = 'pending' THEN wake := true; END IF;
    END IF;
    -- write deleteStepsFrom
    IF m ? 'deleteStepsFrom' THEN
      DELETE FROM steps WHERE run_id = rid AND seq >= (m->>'deleteStepsFrom')::int;
    END IF;
    -- write steps
    IF m ? 'steps' THEN
      INSERT INTO steps (run_id, seq, step_id, kind, status, attempt, output, error, started_at, completed_at, checkpoint)
        SELECT rid, x."seq", x."stepId", x."kind", x."status", x."attempt", x."output", x."error", x."startedAt", x."completedAt", x."checkpoint"
        FROM jsonb_to_recordset(m->'steps') AS x("seq" integer, "stepId" text, "kind" text, "status" text, "attempt" integer, "output" text, "error" text, "startedAt" bigint, "completedAt" bigint, "checkpoint" text)
        ON CONFLICT (run_id, seq) DO UPDATE SET step_id = excluded.step_id, kind = excluded.kind, status = excluded.status, attempt = excluded.attempt, output = excluded.output, error = excluded.error, completed_at = excluded.completed_at, checkpoint = excluded.checkpoint;
    END IF;
    -- write snapshots
    IF m ? 'snapshots' THEN
      INSERT INTO snapshots (run_id, seq, step_id, source, root, files, bytes, files_changed, new_bytes, notes, checkpoint, created_at)
        SELECT rid, x."seq", x."stepId", x."source", x."root", x."files", x."bytes", x."filesChanged", x."newBytes", x."notes", x."checkpoint", x."createdAt"
        FROM ROWS FROM (jsonb_to_recordset(m->'snapshots') AS ("seq" integer, "stepId" text, "source" text, "root" text, "files" integer, "bytes" bigint, "filesChanged" integer, "newBytes" bigint, "notes" text, "checkpoint" text, "createdAt" bigint)) WITH ORDINALITY AS x("seq", "stepId", "source", "root", "files", "bytes", "filesChanged", "newBytes", "notes", "checkpoint", "createdAt", i)
        ORDER BY x.i
        ON CONFLICT (run_id, seq) WHERE source <> 'settle' DO UPDATE SET step_id = excluded.step_id, source = excluded.source, root = excluded.root, files = excluded.files, bytes = excluded.bytes, files_changed = excluded.files_changed, new_bytes = excluded.new_bytes, notes = excluded.notes, checkpoint = excluded.checkpoint, created_at = excluded.created_at;
    END IF;
    -- write waits
    IF m ? 'waits' THEN
      INSERT INTO waits (run_id, name, kind, status, seq, request, wake_at, created_at)
        SELECT rid, x."name", x."kind", 'open', x."seq", x."request", x."wakeAt", now_ms
        FROM jsonb_to_recordset(m->'waits') AS x("name" text, "kind" text, "seq" integer, "request" text, "wakeAt" bigint)
      ON CONFLICT (run_id, name) DO UPDATE SET kind = excluded.kind, status = 'open', seq = excluded.seq, request = excluded.request,
        wake_at = excluded.wake_at, result = NULL, resolved_at = NULL, resolved_by = NULL;
    END IF;
    -- write reopenWaits
    IF m ? 'reopenWaits' THEN
      UPDATE waits SET status = 'open', result = NULL, resolved_at = NULL, resolved_by = NULL
        WHERE run_id = rid AND status = 'cancelled' AND name IN (SELECT jsonb_array_elements_text(m->'reopenWaits'));
    END IF;
    -- write resolveWaits
    IF m ? 'resolveWaits' THEN
      WITH x AS (
        SELECT DISTINCT ON (x."name") x.* FROM ROWS FROM (jsonb_to_recordset(m->'resolveWaits') AS ("name" text, "status" text, "result" text, "by" text)) WITH ORDINALITY AS x("name", "status", "result", "by", i) ORDER BY x."name", x.i
      ), w AS (
        UPDATE waits SET status = x."status", result = x."result", resolved_at = now_ms, resolved_by = x."by"
          FROM x WHERE waits.run_id = rid AND waits.name = x."name" AND waits.status = 'open'
          RETURNING waits.seq, x."status", x."result"
      )
      UPDATE steps SET status = 'completed', output = w."result", completed_at = now_ms
        FROM w WHERE steps.run_id = rid AND steps.seq = w.seq AND w."status" = 'resolved';
    END IF;
    -- write holds
    IF m ? 'holds' THEN
      INSERT INTO holds (run_id, kind, step_id, seq, reason, details, status, created_at)
        SELECT rid, x."kind", x."stepId", x."seq", x."reason", x."details", 'open', now_ms
        FROM ROWS FROM (jsonb_to_recordset(m->'holds') AS ("kind" text, "stepId" text, "seq" integer, "reason" text, "details" text)) WITH ORDINALITY AS x("kind", "stepId", "seq", "reason", "details", i) ORDER BY x.i;
    END IF;
    -- write releaseHolds
    IF m ? 'releaseHolds' THEN
      UPDATE holds SET status = 'released', choice = x."choice", released_at = now_ms, released_by = x."by"
        FROM jsonb_to_recordset(m->'releaseHolds') AS x("id" bigint, "choice" text, "by" text)
        WHERE holds.run_id = rid AND holds.id = x."id" AND holds.status = 'open';
    END IF;
    -- write newRuns
    IF m ? 'newRuns' THEN
      WITH asked AS (
        SELECT DISTINCT ON (x."id") x.* FROM ROWS FROM (jsonb_to_recordset(m->'newRuns') AS ("id" text, "definition" text, "module" text, "fingerprint" text, "status" text, "input" text, "parentId" text, "parentStepId" text, "workspace" text, "createdAt" bigint, "journal" jsonb)) WITH ORDINALITY AS x("id", "definition", "module", "fingerprint", "status", "input", "parentId", "parentStepId", "workspace", "createdAt", "journal", i) ORDER BY x."id", x.i
      ), created AS (
        INSERT INTO runs (id, definition, module, fingerprint, status, input, parent_id, parent_step_id, workspace, created_at, updated_at)
          SELECT asked."id", asked."definition", asked."module", asked."fingerprint", coalesce(asked."status", 'pending'), asked."input", asked."parentId", asked."parentStepId",
                 asked."workspace", asked."createdAt", asked."createdAt"
          FROM asked
        ON CONFLICT (id) DO NOTHING
        RETURNING id, status
      ), journal_rows AS (
        INSERT INTO steps (run_id, seq, step_id, kind, status, attempt, output, error, started_at, completed_at, checkpoint)
        SELECT created.id, x."seq", x."stepId", x."kind", x."status", x."attempt", x."output", x."error", x."startedAt", x."completedAt", x."checkpoint"
        FROM created JOIN asked ON asked."id" = created.id, jsonb_to_recordset(coalesce(asked."journal", '[]'::jsonb)) AS x("seq" integer, "stepId" text, "kind" text, "status" text, "attempt" integer, "output" text, "error" text, "startedAt" bigint, "completedAt" bigint, "checkpoint" text)
        ON CONFLICT (run_id, seq) DO UPDATE SET step_id = excluded.step_id, kind = excluded.kind, status = excluded.status, attempt = excluded.attempt, output = excluded.output, error = excluded.error, completed_at = excluded.completed_at, checkpoint = excluded.checkpoint
      )
      SELECT wake OR coalesce(bool_or(created.status = 'pending'), false) INTO wake FROM created;
    END IF;
    -- write events
    IF m ? 'events' THEN
      INSERT INTO events (run_id, type, at, data)
        SELECT rid, e->>'type', now_ms, coalesce(e->'data', '{}'::jsonb)::text
        FROM jsonb_array_elements(m->'events') WITH ORDINALITY AS t(e, i) ORDER BY i;
    END IF;
    -- write deleteEvents
    IF m ? 'deleteEvents' THEN
      DELETE FROM events WHERE run_id = rid AND type = 'model.delta'
        AND data::jsonb->>'step' = m->'deleteEvents'->>'step' AND (data::jsonb->>'attempt')::int = (m->'deleteEvents'->>'attempt')::int;
    END IF;

    RETURN jsonb_build_object('pauseRequested', CASE WHEN p ? 'pauseRequested' THEN (p->>'pauseRequested')::boolean ELSE cur.pause_requested END, 'wake', wake);
  END
  $$;

  -- Snapshots and new runs' workspace are stead_apply_mutation's now. Kept, doing nothing, for a
  -- worker of an earlier release still running while this lands: it commits through
  -- stead_commit_workspace, which calls this after stead_apply_mutation has written them once.
  CREATE OR REPLACE FUNCTION stead_apply_workspace(units jsonb, results jsonb) RETURNS void LANGUAGE plpgsql AS $$
  BEGIN
    NULL;
  END
  $$;
`,
  },
  {
    version: 7,
    name: "access tokens, stored hashed",
    sql: `CREATE TABLE tokens (
  id TEXT NOT NULL,
  name TEXT NOT NULL,
  role TEXT NOT NULL,
  hash TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  created_by TEXT,
  revoked_at BIGINT,
  revoked_by TEXT,
  last_used_at BIGINT,
  PRIMARY KEY (id)
);
CREATE UNIQUE INDEX tokens_hash ON tokens (hash);
CREATE UNIQUE INDEX tokens_active_name ON tokens (name) WHERE revoked_at IS NULL;`,
  },
  {
    version: 8,
    name: "the transaction that wrote each event, for event streams in commit order",
    sql: `
  ALTER TABLE events ADD COLUMN xid BIGINT NOT NULL DEFAULT (pg_current_xact_id()::text)::bigint;
CREATE INDEX events_xid ON events (xid);
`,
  },
  {
    version: 9,
    name: "run listing: an index per filter and sort key",
    sql: `CREATE INDEX runs_created ON runs (created_at, id);
CREATE INDEX runs_updated ON runs (updated_at, id);
CREATE INDEX runs_status_created ON runs (status, created_at, id);
CREATE INDEX runs_status_updated ON runs (status, updated_at, id);
CREATE INDEX runs_definition_created ON runs (definition, created_at, id);
CREATE INDEX runs_definition_updated ON runs (definition, updated_at, id);
CREATE INDEX runs_session_created ON runs (session_id, created_at, id) WHERE session_id IS NOT NULL;
CREATE INDEX runs_session_updated ON runs (session_id, updated_at, id) WHERE session_id IS NOT NULL;
CREATE INDEX runs_parent_created ON runs (parent_id, created_at, id) WHERE parent_id IS NOT NULL;
CREATE INDEX runs_parent_updated ON runs (parent_id, updated_at, id) WHERE parent_id IS NOT NULL;
CREATE INDEX runs_id_pattern ON runs (id text_pattern_ops);`,
  },
  {
    version: 10,
    name: "definitions workers announce, and which workers serve them",
    sql: `CREATE TABLE definitions (
  name TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  kind TEXT NOT NULL,
  module TEXT,
  input_schema TEXT,
  first_announced_at BIGINT NOT NULL,
  last_seen_at BIGINT NOT NULL,
  PRIMARY KEY (name, fingerprint)
);
CREATE TABLE announcements (
  worker_id TEXT NOT NULL,
  name TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  host TEXT NOT NULL,
  pid INTEGER NOT NULL,
  announced_at BIGINT NOT NULL,
  seen_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (worker_id, name)
);
CREATE INDEX announcements_name ON announcements (name, fingerprint);
CREATE INDEX announcements_expiry ON announcements (expires_at);`,
  },
];
