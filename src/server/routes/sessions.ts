/**
 * A session: its turns, its transcript (rebuilt from the journal), and a message sent as its next
 * turn. A send queues the turn under the agent the session's last turn recorded (no agent code is
 * loaded here); a session with no turn yet is started where its agent's code is (`stead send --agent`).
 */
import { z } from "zod";
import { route } from "../route-table.js";

const sessionId = z.object({ sessionId: z.string().min(1).max(200) }).strict();
/** The message; its size is held to the store's payload limit as every input is. */
const message = z.object({ text: z.string().min(1) }).strict();

export const SESSIONS = [
  route({
    method: "GET",
    path: "/sessions/:sessionId",
    summary: "A session and its turns in order: each turn's run, status and how it ended",
    tag: "sessions",
    action: "sessions.read",
    params: sessionId,
    handle: ({ stead, params }) => stead.sessions.get(params.sessionId),
  }),
  route({
    method: "GET",
    path: "/sessions/:sessionId/transcript",
    summary: "A session's transcript, turn by turn: inputs, model text, tool calls and results, rebuilt from the journal",
    tag: "sessions",
    action: "sessions.read",
    params: sessionId,
    handle: ({ stead, params }) => stead.sessions.transcript(params.sessionId),
  }),
  route({
    method: "POST",
    path: "/sessions/:sessionId/messages",
    summary: "Send a session a message: queue it as the next turn (a worker runs turns one at a time, in order)",
    tag: "sessions",
    action: "sessions.send",
    idempotent: true,
    params: sessionId,
    body: message,
    handle: ({ stead, params, body, actor, idempotencyKey }) => stead.sessions.send(params.sessionId, body.text, { by: actor, ...(idempotencyKey === undefined ? {} : { idempotencyKey }) }),
  }),
];
