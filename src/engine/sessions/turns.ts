/**
 * A session's turns, read and queued by the session's id alone. `Session` (sessions.ts) queues
 * with a definition in hand; a skin that loads no code (the HTTP API, MCP) queues the next turn
 * of a session that exists under the definition and module its last turn recorded. Both queue
 * through `queueTurn`, so a key used by one replays in the other.
 */
import { SteadError } from "../../errors.js";
import { damageRefusal } from "../../store/damage.js";
import { sessionTurns } from "../../store/run-sets.js";
import type { Commits, IdempotencyKeys, RunReads, RunRow } from "../../store/types.js";
import type { KeyOption } from "../control/common.js";
import type { ControlOptions } from "../control/options.js";
import { checkRunId, idExcerpt, newRunId } from "../ids.js";
import { onceByKey, type Replayable } from "../control/idempotency.js";
import { encodePayload } from "../payload.js";
import type { RunInfo } from "../runs/views.js";
import type { TurnOutcome, TurnView } from "../../client/api-types.js";

export type { TurnOutcome, TurnView } from "../../client/api-types.js";

export function turnOutcome(status: string, error: string | null): TurnOutcome {
  if (status === "failed" && error?.includes("STEAD_TURN_INTERRUPTED")) return "interrupted";
  return status === "completed" || status === "cancelled" ? status : "failed";
}

/** What a session needs of the Stead instance that made it. */
export interface SessionHost {
  readonly store: Commits & IdempotencyKeys & RunReads;
  readonly payloadLimit: number;
  keyOption(options: ControlOptions | undefined): KeyOption | undefined;
  ready(): Promise<void>;
  view(row: RunRow): Promise<RunInfo>;
}

/** Where a turn goes: the session, and the definition, module and workspace its turns run under. */
export interface TurnTarget {
  readonly sessionId: string;
  readonly definition: string;
  readonly module: string | null;
  readonly workspace: string | null;
}

/** Every turn of a session, in turn order (an unknown session has none). */
export async function turnViews(host: SessionHost, sessionId: string): Promise<TurnView[]> {
  await host.ready();
  const runs = await sessionTurns(host.store, sessionId);
  return Promise.all(runs.map(async (r) => ({ ...(await host.view(r)), turn: r.turn ?? 0, outcome: ["completed", "failed", "cancelled"].includes(r.status) ? turnOutcome(r.status, r.error) : null })));
}

/**
 * Queues `input` as the next turn of `target.sessionId`. A turn records no fingerprint until a
 * worker claims it, so a session takes a new definition at a turn boundary. Refused, with nothing
 * written: a session that belongs to another definition (STEAD_ID_TAKEN).
 */
export async function queueTurn(host: SessionHost, target: TurnTarget, input: unknown, options: ControlOptions = {}): Promise<Replayable<{ runId: string; turn: number }>> {
  const encoded = encodePayload(input, `the input of session ${target.sessionId}`, host.payloadLimit) ?? "null";
  const key = host.keyOption(options);
  await host.ready();
  const by = options.by ?? null;
  const call = key ? { verb: "send" as const, scope: target.sessionId, key: key.key, args: { definition: target.definition, input: JSON.parse(encoded) as unknown }, by, ttlMs: key.ttlMs } : undefined;
  return onceByKey<{ runId: string; turn: number }>(host.store, call, async (keyWrite) => {
    const prior = await host.store.listSessions({ sessionId: target.sessionId, limit: 1 });
    // A turn continues the history before it: a session whose last turn cannot be read takes none.
    const damaged = prior[0]?.damaged;
    if (damaged) throw damageRefusal(damaged, { session: target.sessionId });
    const other = prior[0]?.definition;
    if (other !== undefined && other !== target.definition) {
      throw new SteadError("STEAD_ID_TAKEN", `session ${target.sessionId} belongs to "${other}", not "${target.definition}"`, {
        fix: "use another session id for another agent",
      });
    }
    const runId = newRunId();
    // The turn's number is only known once inserted: the key records the run, and a repeat reads its turn back.
    const row: RunRow = await host.store.createRun(
      { id: runId, definition: target.definition, module: target.module, fingerprint: null, input: encoded, sessionId: target.sessionId, createdAt: Date.now(), workspace: target.workspace },
      [{ type: "run.created", data: { definition: target.definition, session: target.sessionId, by } }],
      keyWrite?.({ runId, turn: 0 }),
    );
    return { runId: row.id, turn: row.turn ?? 0, already: false };
  }).then(async (r) => (r.already ? { ...r, turn: (await host.store.getRun(r.runId))?.turn ?? r.turn } : r));
}

/**
 * Queues the next turn of a session that exists, under the definition, module and workspace its
 * last turn recorded (no agent code is loaded). A session with no turn yet is refused: which
 * agent it talks to is only known to whoever starts it (`stead send --agent`, `stead.session`).
 */
export async function sendToSession(host: SessionHost, sessionId: string, input: unknown, options: ControlOptions = {}): Promise<Replayable<{ runId: string; turn: number }>> {
  checkRunId(sessionId, "session id");
  // Checked before the store is read: bad input is refused the same way whether or not the session exists.
  encodePayload(input, `the input of session ${sessionId}`, host.payloadLimit);
  host.keyOption(options);
  await host.ready();
  const last = (await sessionTurns(host.store, sessionId)).at(-1);
  if (!last) {
    throw new SteadError("STEAD_SESSION_NOT_FOUND", `no session ${idExcerpt(sessionId)} yet, so Stead does not know its agent`, {
      session: sessionId,
      fix: `start it where the agent's code is: stead send ${sessionId} "<text>" --agent ./agent.ts`,
    });
  }
  return queueTurn(host, { sessionId, definition: last.definition, module: last.module, workspace: last.workspace }, input, options);
}
