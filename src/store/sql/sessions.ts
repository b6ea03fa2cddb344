/**
 * SQL about sessions shared by every SQL store (both dialects accept it as written). A session is
 * the set of runs sharing a `session_id`; each is a turn, numbered from 1 by `createRun`.
 */
import { SteadError } from "../../errors.js";
import { TERMINAL_STATUSES } from "../types.js";

/**
 * `('completed', 'failed', 'cancelled')`. Migration 2's partial index `runs_session_open` spells
 * the same list: a query uses that index only if its predicate repeats the index's exactly.
 */
export const TERMINAL_SQL = `(${TERMINAL_STATUSES.map((s) => `'${s}'`).join(", ")})`;

/**
 * The claim condition for the candidate row aliased `alias`: outside any session, or every earlier
 * turn of its session terminal. Monotone: a terminal run never leaves its status, and no earlier
 * turn can appear later (a turn number is 1 + the highest already committed), so once true for a
 * run it stays true.
 */
export function earlierTurnsEnded(alias: string): string {
  return `(${alias}.session_id IS NULL OR NOT EXISTS (
    SELECT 1 FROM runs e WHERE e.session_id = ${alias}.session_id AND e.turn < ${alias}.turn AND e.status NOT IN ${TERMINAL_SQL}))`;
}

/**
 * One row per session (mapped by `toSession`), most recently updated first, with `?` placeholders
 * (see sql/dialect.ts). Parameters: [sessionId,] limit. All in one statement, so counts, current
 * and last turn come from one snapshot.
 */
export function sessionsSql(bySession: boolean): string {
  const where = bySession ? "AND session_id = ?" : "";
  const limit = "?";
  return `
    WITH s AS (
      SELECT session_id, COUNT(*) AS turns,
        SUM(CASE WHEN status IN ${TERMINAL_SQL} THEN 0 ELSE 1 END) AS open_turns,
        MIN(created_at) AS created_at, MAX(updated_at) AS updated_at, MAX(turn) AS latest_turn,
        MIN(CASE WHEN status IN ${TERMINAL_SQL} THEN NULL ELSE turn END) AS current_turn,
        MAX(CASE WHEN status IN ${TERMINAL_SQL} THEN turn ELSE NULL END) AS last_turn
      FROM runs WHERE session_id IS NOT NULL ${where}
      GROUP BY session_id
      ORDER BY MAX(updated_at) DESC, session_id
      LIMIT ${limit}
    )
    SELECT s.session_id, s.turns, s.open_turns, s.created_at, s.updated_at, l.definition,
      c.id AS current_id, s.current_turn, c.status AS current_status,
      t.id AS last_id, s.last_turn, t.status AS last_status, t.error AS last_error
    FROM s
    JOIN runs l ON l.session_id = s.session_id AND l.turn = s.latest_turn
    LEFT JOIN runs c ON c.session_id = s.session_id AND c.turn = s.current_turn
    LEFT JOIN runs t ON t.session_id = s.session_id AND t.turn = s.last_turn
    ORDER BY s.updated_at DESC, s.session_id`;
}

/** A session's turn is numbered by createRun alone: a mutation's `newRuns` entry cannot take one. */
export function sessionInNewRuns(runId: string): SteadError {
  return new SteadError("STEAD_INVALID_MUTATION", `run ${runId} names a session, but only createRun starts a session's turn`, {
    runId,
    fix: "create the turn with store.createRun, outside a commit",
  });
}
