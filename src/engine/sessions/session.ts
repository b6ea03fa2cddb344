import { SteadError } from "../../errors.js";
import type { SessionSummary } from "../../store/types.js";
import type { WorkflowDefinition } from "../definitions/definition.js";
import { isDefinition } from "../definitions/definition.js";
import { checkRunId } from "../ids.js";
import { checkedInput } from "../definitions/input-schema.js";
import type { ControlOptions } from "../control/options.js";
import type { Replayable } from "../control/idempotency.js";
import { queueTurn, turnOutcome, turnViews, type SessionHost, type TurnView } from "./turns.js";
import type { SessionView } from "../../client/api-types.js";

export type { SessionView } from "../../client/api-types.js";

export { turnOutcome, type SessionHost, type TurnOutcome, type TurnView } from "./turns.js";

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
    ...(s.damaged ? { damaged: s.damaged } : {}),
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
    if (this.definition.input) await checkedInput(this.definition, input, { fix: `send an input that matches the input schema of ${this.definition.name}` });
    return queueTurn(this.stead, { sessionId: this.id, definition: this.definition.name, module: this.definition.module, workspace: this.workspace }, input, options);
  }

  /** The session's turns, in order. */
  async turns(): Promise<TurnView[]> {
    return turnViews(this.stead, this.id);
  }
}
