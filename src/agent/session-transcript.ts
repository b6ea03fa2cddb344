/** A session's transcript read from the store: its turns' runs and journals, rebuilt (transcript.ts). */
import { idExcerpt } from "../engine/ids.js";
import { sessionTurns } from "../store/run-sets.js";
import { SteadError } from "../errors.js";
import type { Store } from "../store/types.js";
import { sessionTranscript } from "./transcript.js";
import type { SessionTranscript } from "../client/api-types.js";

export type { SessionTranscript } from "../client/api-types.js";

export async function readSessionTranscript(store: Pick<Store, "listRuns" | "journal">, sessionId: string): Promise<SessionTranscript> {
  const runs = await sessionTurns(store, sessionId);
  if (runs.length === 0) throw new SteadError("STEAD_SESSION_NOT_FOUND", `no session ${idExcerpt(sessionId)}`, { fix: "list sessions with `stead sessions`" });
  const turns = sessionTranscript(await Promise.all(runs.map(async (run) => ({ run, journal: await store.journal(run.id) }))));
  return { session: sessionId, definition: runs[runs.length - 1]?.definition ?? "?", turns };
}
