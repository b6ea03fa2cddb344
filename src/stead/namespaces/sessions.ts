/** `stead.sessions`: sessions, their turns and transcripts, and a session's next turn. */
import type { ControlOptions } from "../../engine/control/options.js";
import type { Replayable } from "../../engine/control/idempotency.js";
import { sessionView, type SessionView } from "../../engine/sessions/session.js";
import type { TurnView } from "../../engine/sessions/turns.js";
import type { RunInfo } from "../../engine/runs/views.js";
import type { SessionTranscript } from "../../agent/session-transcript.js";
import { callableNamespace, type StoreHost } from "./bind.js";

type SessionFilter = { limit?: number; sessionId?: string };

export interface SteadSessions {
  /** Sessions with their queue and last turn, most recently active first; one whose last turn cannot be read is listed marked `damaged`. */
  list(filter?: SessionFilter): Promise<SessionView[]>;
  /** The run ids of a session's turns, oldest first; empty when there is no such session. */
  runIds(sessionId: string): Promise<string[]>;
  /** A session's latest turn (null when there is no such session): the definition and module it recorded. */
  lastTurn(sessionId: string): Promise<(RunInfo & { turn: number }) | null>;
  /** A session's transcript, rebuilt from its turns' journals with no agent code loaded (STEAD_SESSION_NOT_FOUND for none). */
  transcript(sessionId: string): Promise<SessionTranscript>;
  /** A session and its turns in order (runs with their turn number and how each ended); STEAD_SESSION_NOT_FOUND for none. */
  get(sessionId: string): Promise<{ session: SessionView; turns: TurnView[] }>;
  /**
   * Queues `input` as the next turn of a session that exists, under the agent its last turn
   * recorded, with no agent code loaded: what a skin that holds no definitions (the HTTP API,
   * MCP) sends. A session with no turn yet is STEAD_SESSION_NOT_FOUND (start it with `stead.session()`).
   */
  send(sessionId: string, input: unknown, options?: ControlOptions): Promise<Replayable<{ runId: string; turn: number }>>;
}

/** `stead.sessions(filter)`, kept for one release. */
export interface FlatSessions {
  /** @deprecated use `stead.sessions.list()` */
  (filter?: SessionFilter): Promise<SessionView[]>;
}

export type SessionsBodies = Omit<SteadSessions, "list">;
export const SESSIONS_VERBS = {
  runIds: "sessionRunIds",
  lastTurn: "lastTurn",
  transcript: "transcript",
  get: "sessionWithTurns",
  send: "sendToSession",
} as const;

export function steadSessions(host: StoreHost, bodies: SessionsBodies): Readonly<SteadSessions> & FlatSessions {
  const list = async (filter: SessionFilter = {}): Promise<SessionView[]> => {
    await host.ready();
    return (await host.store.listSessions(filter)).map(sessionView);
  };
  return callableNamespace({ ...bodies, list }, "sessions", "sessions.list", list);
}
