import { SteadError } from "../../errors.js";
import type { StepKind, StepRow } from "../../store/types.js";
import { divergence, unreplayed } from "./hold-facts.js";
import type { HoldFacts } from "./lifecycle.js";

/**
 * Where the code is in the run's journal. Journal position `seq` is the order in which the code
 * asks for steps; replay requires the entry at each position to have the same step id and kind.
 * A position with no entry runs live: it may lie before recorded ones (concurrent steps whose
 * later one committed first), so "replaying" is answered per position, never for the execution.
 */
export class JournalCursor {
  private readonly journal = new Map<number, StepRow>();
  private readonly maxSeq: number;
  private next = 0;
  /**
   * The journal position at which each step id was first asked for: ids share one namespace per
   * run. A position, not a call site: a stack captured per step cost more than the rest of the
   * check and was kept for the whole run; the second call's site is captured only when it is thrown.
   */
  private readonly firstAt = new Map<string, number>();

  constructor(
    private readonly runId: string,
    journal: readonly StepRow[],
    /** Called when the code diverges from the journal; the caller's ctx call then never settles. */
    private readonly diverged: (hold: HoldFacts) => void,
  ) {
    let max = -1;
    for (const s of journal) {
      this.journal.set(s.seq, s);
      max = Math.max(max, s.seq);
    }
    this.maxSeq = max;
  }

  /** Takes the next position for `stepId`: its recorded entry if any, or undefined on divergence. */
  position(stepId: string, kinds: readonly StepKind[]): { seq: number; entry: StepRow | undefined } | undefined {
    const seq = this.next++;
    const entry = this.journal.get(seq);
    if (entry && (entry.stepId !== stepId || !kinds.includes(entry.kind))) {
      this.diverged(divergence(seq, entry, stepId, kinds));
      return undefined;
    }
    return { seq, entry };
  }

  /** Passes every recorded position unreplayed (a session turn cut off with policy "interrupt"). */
  skipToEnd(): void {
    this.next = this.maxSeq + 1;
  }

  /** When the code has finished: the hold if the journal has positions it never asked for. */
  leftOver(): HoldFacts | undefined {
    if (this.maxSeq < this.next) return undefined;
    return unreplayed(this.next, this.maxSeq, this.journal.get(this.maxSeq));
  }

  /** Throws when `stepId` is not a valid id or was used before in this run, naming both call sites. */
  checkUnique(stepId: string): void {
    // A NUL cannot be stored in a Postgres text column: a run whose step id held one could never commit.
    if (typeof stepId !== "string" || stepId.length === 0 || stepId.length > 200 || stepId.includes("\u0000")) {
      throw new SteadError("STEAD_INVALID_DEFINITION", `invalid step id ${JSON.stringify(stepId)} in run ${this.runId}`, {
        runId: this.runId,
        fix: "give every step a non-empty string id of at most 200 characters, without NUL (U+0000)",
      });
    }
    const first = this.firstAt.get(stepId);
    if (first !== undefined) {
      throw new SteadError(
        "STEAD_DUPLICATE_STEP_ID",
        `step id "${stepId}" is used twice in run ${this.runId}: first at journal position ${first}, again at ${callSite(new Error())}`,
        { runId: this.runId, stepId, fix: "give each step a unique id, e.g. include the loop index: `fetch-${i}`" },
      );
    }
    this.firstAt.set(stepId, this.next);
  }
}

/** The first frame of `e` outside this folder and Node's internals: the user's call. */
function callSite(e: Error): string {
  const lines = (e.stack ?? "").split("\n").slice(1);
  const frame = lines.find((l) => !/[/\\]engine[/\\]execution[/\\]/.test(l) && !l.includes("node:internal") && /\d+:\d+\)?\s*$/.test(l));
  return frame?.trim().replace(/^at\s+/, "") ?? "unknown location";
}
