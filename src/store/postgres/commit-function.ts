/**
 * Postgres's stead_commit from schema 12 (RETURNED_REFUSALS_VERSION): a unit gets a subtransaction
 * only when it can be refused after it has written, the rule SQLite's commitTransaction follows.
 *
 * Why: a PL/pgSQL `BEGIN … EXCEPTION` block is a subtransaction, and up to schema 11 every unit had
 * one (and every optional mutation another). Each that writes takes a subtransaction id; past 64 in
 * one transaction the backend's cache overflows, and every other session's snapshot taken while it
 * runs must look subtransactions up in pg_subtrans. A group commit of 50 runs' steps made 50.
 *
 * Invariant it relies on: a refused mutation writes nothing (mutation/plan.ts runs every check
 * before any write, and the one check that writes, the idempotency key, writes only when it
 * passes), and stead_apply_mutation returns its refusal. So a unit whose only non-optional mutation
 * is its first needs no undo: refused there, nothing of it was written; a refused optional
 * mutation is skipped and wrote nothing either. Only a non-optional mutation after the first can
 * be refused once earlier ones wrote; such a unit runs in a block that the refusal rolls back.
 *
 * Hazard: a refused mutation's row locks (the run row, a wait or hold row: FOR UPDATE) are now kept
 * to the end of the transaction rather than released with a subtransaction. Lock order is
 * unchanged (units in run-id order), so this adds waiting for a concurrent writer of that run, not
 * a deadlock.
 */

/** The SQLSTATE stead_commit raises only to roll back a refused unit's block, and catches there. */
const UNDO_UNIT = "ST900";

/** Migration 12's functions (frozen once released: test/store.migrations-frozen.test.ts pins them). */
export const COMMIT_FUNCTIONS_V12 = `
  -- A unit's mutations in order, until a non-optional one is refused: { ok: true, pauseRequested,
  -- wake } or that refusal. An optional mutation's refusal is skipped (it wrote nothing).
  CREATE FUNCTION stead_apply_unit(u jsonb, now_ms bigint) RETURNS jsonb LANGUAGE plpgsql AS $$
  DECLARE
    m jsonb;
    r jsonb;
    pause boolean := false;
    wake boolean := false;
  BEGIN
    FOR m IN SELECT * FROM jsonb_array_elements(u) LOOP
      r := stead_apply_mutation(m, now_ms);
      IF coalesce((m->>'optional')::boolean, false) THEN
        wake := wake OR coalesce((r->>'wake')::boolean, false);
      ELSIF (r->>'ok')::boolean THEN
        pause := pause OR (r->>'pauseRequested')::boolean;
        wake := wake OR (r->>'wake')::boolean;
      ELSE
        RETURN r;
      END IF;
    END LOOP;
    RETURN jsonb_build_object('ok', true, 'pauseRequested', pause, 'wake', wake);
  END
  $$;

  -- Applies units (arrays of mutations) in the caller's transaction; returns one result per unit.
  CREATE OR REPLACE FUNCTION stead_commit(units jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
  DECLARE
    u jsonb;
    r jsonb;
    results jsonb := '[]'::jsonb;
    wake boolean := false;
    now_ms bigint := stead_now_ms();
  BEGIN
    FOR u IN SELECT * FROM jsonb_array_elements(units) LOOP
      IF EXISTS (SELECT 1 FROM jsonb_array_elements(u) WITH ORDINALITY AS t(x, i)
                 WHERE i > 1 AND NOT coalesce((x->>'optional')::boolean, false)) THEN
        BEGIN
          r := stead_apply_unit(u, now_ms);
          -- r keeps its value through the rollback: PL/pgSQL variables are not transactional.
          IF NOT (r->>'ok')::boolean THEN RAISE EXCEPTION 'unit refused' USING ERRCODE = '${UNDO_UNIT}'; END IF;
        EXCEPTION WHEN SQLSTATE '${UNDO_UNIT}' THEN
          NULL;
        END;
      ELSE
        r := stead_apply_unit(u, now_ms);
      END IF;
      IF (r->>'ok')::boolean THEN
        wake := wake OR (r->>'wake')::boolean;
        results := results || jsonb_build_array(jsonb_build_object('ok', true, 'pauseRequested', (r->>'pauseRequested')::boolean));
      ELSE
        results := results || jsonb_build_array(r);
      END IF;
    END LOOP;
    -- NOTIFY is transactional: workers hear it only if this commit lands.
    IF wake THEN PERFORM pg_notify('stead_wake', ''); END IF;
    RETURN results;
  END
  $$;
`;
