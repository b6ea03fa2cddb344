import { SteadError } from "../errors.js";
import type { RunRow, SessionSummary, Store } from "../store/types.js";
import type { WorkflowDefinition } from "./definition.js";
import { isDefinition } from "./definition.js";
import { checkRunId, newRunId } from "./ids.js";
import { encodePayload } from "./payload.js";
import type { KeyOption } from "./control/common.js";
import type { ControlOptions } from "./control-options.js";
import { onceByKey, type Replayable } from "./idempotency.js";
import type { RunInfo } from "./views.js";

/** How a turn ended, as people read it: a failure with STEAD_TURN_INTERRUPTED is "interrupted". */
export type TurnOutcome = "completed" | "failed" | "interrupted" | "cancelled";

export interface SessionView {
  id: string;
  definition: string;
  turns: number;
  /** Turns not yet ended (the one running or waiting, and those queued behind it). */
  open: number;
  current: { runId: string; turn: number; status: string } | null;
  last: { runId: string; turn: number; outcome: TurnOutcome; error: string | null } | null;
  createdAt: string;
  updatedAt: string;
}

export function turnOutcome(status: string, error: string | null): TurnOutcome {
  if (status === "failed" && error?.includes("STEAD_TURN_INTERRUPTED")) return "interrupted";
  return status === "completed" || status === "cancelled" ? status : "failed";
}

export function sessionView(s: SessionSummary): SessionView {
  return {
    id: s.sessionId,
    definition: s.definition,
    turns: s.turns,
    open: s.open,
    current: s.current,
    last: s.last ? { runId: s.last.runId, turn: s.last.turn, outcome: turnOutcome(s.last.status, s.last.error), error: errorText(s.last.error) } : null,
    createdAt: new Date(s.createdAt).toISOString(),
    updatedAt: new Date(s.updatedAt).toISOString(),
  };
}

function errorText(error: string | null): string | null {
  if (!error) return null;
  try {
    return (JSON.parse(error) as { message?: string }).message ?? error;
  } catch {
    return error;
  }
}

/** What a session needs of the Stead instance that made it. */
export interface SessionHost {
  readonly store: Store;
  readonly payloadLimit: number;
  keyOption(options: ControlOptions | undefined): KeyOption | undefined;
  ready(): Promise<void>;
  view(row: RunRow): Promise<RunInfo>;
}

export class Session<I> {
  constructor(
    private readonly stead: SessionHost,
    readonly definition: WorkflowDefinition<I, unknown>,
    readonly id: string,
    /** The directory every turn works in (absolute), or null. */
    readonly workspace: string | null = null,
  ) {
    if (!isDefinition(definition)) {
      throw new SteadError("STEAD_INVALID_DEFINITION", "session() needs a definition made with agent()", { fix: 'stead.session(myAgent, "support-42")' });
    }
    checkRunId(id, "session id");
  }

  /**
   * Queues `input` as the next turn. Turns run one at a time in order; a turn records no
   * fingerprint until a worker claims it, so a session takes a new definition at a turn boundary.
   */
  async send(input: I, options: ControlOptions = {}): Promise<Replayable<{ runId: string; turn: number }>> {
    const stead = this.stead;
    const encoded = encodePayload(input, `the input of session ${this.id}`, stead.payloadLimit) ?? "null";
    const key = stead.keyOption(options);
    await stead.ready();
    const by = options.by ?? null;
    const call = key ? { verb: "send" as const, scope: this.id, key: key.key, args: { definition: this.definition.name, input: JSON.parse(encoded) as unknown }, by, ttlMs: key.ttlMs } : undefined;
    return onceByKey<{ runId: string; turn: number }>(stead.store, call, async (keyWrite) => {
      const prior = await stead.store.listSessions({ sessionId: this.id, limit: 1 });
      const other = prior[0]?.definition;
      if (other !== undefined && other !== this.definition.name) {
        throw new SteadError("STEAD_ID_TAKEN", `session ${this.id} belongs to "${other}", not "${this.definition.name}"`, {
          fix: "use another session id for another agent",
        });
      }
      const runId = newRunId();
      // The turn's number is only known once inserted: the key records the run, and a repeat reads its turn back.
      const row: RunRow = await stead.store.createRun(
        { id: runId, definition: this.definition.name, module: this.definition.module, fingerprint: null, input: encoded, sessionId: this.id, createdAt: Date.now(), workspace: this.workspace },
        [{ type: "run.created", data: { definition: this.definition.name, session: this.id, ...(by ? { by } : {}) } }],
        keyWrite?.({ runId, turn: 0 }),
      );
      return { runId: row.id, turn: row.turn ?? 0, already: false };
    }).then(async (r) => (r.already ? { ...r, turn: (await stead.store.getRun(r.runId))?.turn ?? r.turn } : r));
  }

  /** The session's turns, in order. */
  async turns(): Promise<(RunInfo & { turn: number; outcome: TurnOutcome | null })[]> {
    await this.stead.ready();
    const runs = await this.stead.store.listRuns({ sessionId: this.id, limit: 100_000 });
    return Promise.all(runs.map(async (r) => ({ ...(await this.stead.view(r)), turn: r.turn ?? 0, outcome: ["completed", "failed", "cancelled"].includes(r.status) ? turnOutcome(r.status, r.error) : null })));
  }
}
