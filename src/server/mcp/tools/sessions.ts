/**
 * A session's next turn: `send` queues a message under the agent the session's last turn
 * recorded (no agent code is loaded), with the caller as `by` and an optional `idempotencyKey`.
 */
import { z } from "zod";
import { sendResult } from "../outputs.js";
import { tool } from "../tool-table.js";
import { idempotencyKey } from "./control.js";

export const SESSION_TOOLS = [
  tool({
    name: "send",
    title: "Send a session a message",
    description:
      "Queue a message as the next turn of an existing session (see list_sessions); a worker runs turns one at a time, in order, each continuing the conversation. Returns the turn's run id and number: follow it with get_run or session_transcript. A session with no turn yet is refused: it is started where its agent's code is (`stead send --agent`).",
    action: "sessions.send",
    input: z
      .object({
        session: z.string().min(1).max(200).describe("the session's id"),
        text: z.string().min(1).describe("the message"),
        idempotencyKey,
      })
      .strict(),
    output: sendResult,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    handle: ({ stead, args, by }) => stead.sessions.send(args.session, args.text, { by, ...(args.idempotencyKey === undefined ? {} : { idempotencyKey: args.idempotencyKey }) }),
  }),
];
