import type { Command } from "commander";
import { checkRunId, idExcerpt } from "../../engine/ids.js";
import { SteadError } from "../../errors.js";
import { statusColour } from "../colour.js";
import { act, defaultBy, example, keyOf, parsePositiveInt, print, printJson, withStead } from "../context.js";
import { EXIT } from "../exit-codes.js";
import { age, printable, table } from "../format.js";
import { writeErr } from "../report-error.js";
import { loadFile, pickWorkflow } from "../load.js";
import { transcriptLines } from "../transcript.js";

export function registerSessions(program: Command): void {
  const send = program
    .command("send")
    .description("queue a message as the next turn of an agent session; a worker runs turns one at a time, in order")
    .argument("<session>", "session id (any name: support-42)")
    .argument("<text>", "the message")
    .option("--agent <file>", "the file exporting the agent (needed for a new session; default: the module its last turn recorded)")
    .option("--name <agent>", "which agent, when the file exports several (default without --agent: the one its last turn recorded)")
    .option("--idempotency-key <key>", "queue at most one turn for this key: a repeat reports the turn the first call queued")
    .option("--by <who>", "who sends it (default $USER@host)")
    .action(
      act(async (sessionId: string, text: string, o: { agent?: string; name?: string; idempotencyKey?: string; by?: string }, cmd: Command) => {
        checkRunId(sessionId, "session id");
        // A named file is loaded before the store is opened: a bad --agent or --name writes nothing.
        const named = o.agent === undefined ? undefined : pickWorkflow(await loadFile(o.agent), o.agent, o.name, "--name");
        // Without --agent the session must exist already: its store is not created.
        return withStead(cmd, named !== undefined, async (stead) => {
          let file = o.agent;
          // Without --name, a file that exports several agents gives the one the last turn recorded.
          let name = o.name;
          if (file === undefined) {
            const last = await stead.sessions.lastTurn(sessionId);
            if (!last?.module) {
              throw new SteadError("STEAD_BAD_OPTION", last ? `session ${sessionId} did not record its agent's module` : `no session ${idExcerpt(sessionId)} yet, so Stead does not know its agent`, {
                fix: `name the agent's file: stead send ${sessionId} "<text>" --agent ./agent.ts`,
              });
            }
            file = last.module;
            name ??= last.definition;
          }
          const definition = named ?? pickWorkflow(await loadFile(file), file, name, "--name");
          const { runId, turn, already } = await stead.session(definition, sessionId).send(text, { by: o.by ?? defaultBy(), ...keyOf(o) });
          print(
            already
              ? `turn ${turn} of session ${sessionId} (run ${runId}) was already queued with this key; nothing changed`
              : `queued turn ${turn} of session ${sessionId} as run ${runId} (${definition.name}); a worker runs it: stead worker ${file}`,
          );
          return EXIT.ok;
        });
      }),
    );
  example(send, `stead send support-42 "Where is my order?" --agent ./support.ts`, `stead send support-42 "And the invoice?"`);

  const sessions = program
    .command("sessions")
    .description("list agent sessions: turns, queue, the current turn and how the last one ended; `sessions show <id>` prints one's transcript")
    .option("--limit <n>", "at most this many sessions, most recently active first", "50")
    .option("--json", "print JSON")
    .action(
      act(async (o: { limit: string; json?: boolean }, cmd: Command) => {
        const limit = parsePositiveInt(o.limit, "--limit");
        await withStead(cmd, "read", async (stead) => {
          const list = await stead.sessions.list({ limit });
          if (o.json) return printJson(list);
          if (list.length === 0) return print("no sessions");
          print(
            table(
              ["SESSION", "AGENT", "TURNS", "QUEUED", "CURRENT", "LAST TURN", "UPDATED"],
              list.map((s) => [
                s.id,
                s.definition,
                String(s.turns),
                String(Math.max(0, s.open - (s.current ? 1 : 0))),
                s.current ? `#${s.current.turn} ${s.current.status} (${s.current.runId})` : "-",
                s.last ? `#${s.last.turn} ${s.last.outcome}${s.damaged ? `: damaged: ${s.damaged.code}` : s.last.error && s.last.outcome !== "completed" ? `: ${s.last.error.slice(0, 60)}` : ""}` : "-",
                age(Date.parse(s.updatedAt)),
              ]),
            ),
          );
          for (const s of list) if (s.damaged) writeErr(`session ${s.id} is damaged: ${printable(s.damaged.message)}`);
        });
      }),
    );
  example(sessions, "stead sessions", "stead sessions --json", "stead sessions show support-42");

  const show = sessions
    .command("show")
    .description("a session's transcript, read from its journals: each turn's status, the user's input, the model's text, tool calls with arguments and results")
    .argument("<session>", "session id")
    .option("--json", "print JSON")
    .action(
      act(async (sessionId: string, _o: unknown, cmd: Command) => {
        // `sessions show x --json`: the parent `sessions` (which has a --json too) takes the flag first.
        const o = cmd.optsWithGlobals<{ json?: boolean }>();
        await withStead(cmd, false, async (stead) => {
          const t = await stead.sessions.transcript(sessionId);
          if (o.json) return printJson(t);
          for (const line of transcriptLines(sessionId, t.definition, t.turns, statusColour)) print(line);
        });
      }),
    );
  example(show, "stead sessions show support-42", "stead sessions show support-42 --json | jq '.turns[-1]'");
}
