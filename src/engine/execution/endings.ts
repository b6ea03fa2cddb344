import type { OutputRefField, RunRow, Store } from "../../store/types.js";
import { storedWithRefs } from "../runs/output-refs.js";
import { decodePayload, encodeError, encodePayload, errorRecord } from "../payload.js";
import { foreignChild, parentWake } from "./children.js";
import type { JournalCursor } from "./cursor.js";
import { holdMutation } from "./hold-facts.js";
import type { CodeResult, Ending, HoldFacts } from "./lifecycle.js";
import type { ExecutionOutcome } from "./outcome.js";
import { parkWrite } from "./wait-steps.js";
import type { FencedWriter } from "./writer.js";

export interface EndingParts {
  run: RunRow;
  payloadLimit: number;
  cursor: JournalCursor;
  writer: FencedWriter;
  /** Reads only: whether a new child's id is held already; where the parent's wait for this run lies. */
  store: Pick<Store, "getRun" | "waits">;
  /** What to store as the run's output instead of the returned value (EnginePort.storeOutputAs). */
  storedOutput(): { value: unknown; refs?: readonly OutputRefField[] } | undefined;
}

/**
 * Makes the one write that ends the execution, after its in-flight steps have settled, and
 * says how it ended. A refused write never returns (the writer has finished the execution).
 */
export async function writeEnding(ending: Ending, x: EndingParts): Promise<ExecutionOutcome> {
  switch (ending.kind) {
    case "complete":
      return complete(ending.result, x);
    case "hold":
      return hold(ending.hold, x);
    case "park": {
      const taken = ending.newRuns.length > 0 ? await foreignChild(x.store, ending.newRuns) : undefined;
      if (taken) return complete({ ok: false, error: taken }, x);
      const { m, expect, stillOpen } = parkWrite(ending);
      await x.writer.write(
        m,
        stillOpen.map((name) => ({ runId: x.run.id, expect: { openWait: name } })),
        expect,
      );
      return { kind: "waiting", wait: ending.waits[0].wait.name };
    }
    case "pause":
      await x.writer.write({ run: { status: "paused", releaseLease: true, pauseRequested: false }, events: [{ type: "run.paused", data: {} }] });
      return { kind: "paused" };
    case "release":
      await x.writer.write({ run: { status: "pending", releaseLease: true }, events: [{ type: "run.released", data: { reason: "worker shutdown" } }] });
      return { kind: "released" };
  }
}

async function hold(h: HoldFacts, x: EndingParts): Promise<ExecutionOutcome> {
  await x.writer.write(holdMutation(h));
  return { kind: "held", hold: h.hold, reason: h.reason };
}

/** The run completes or fails with the code's result; a journal the code did not finish replaying holds it instead. */
async function complete(result: CodeResult, x: EndingParts): Promise<ExecutionOutcome> {
  const left = x.cursor.leftOver();
  if (left) return hold(left, x);
  const runId = x.run.id;
  let output: string | null = null;
  let error: unknown = result.ok ? undefined : result.error;
  let full: string | null = null;
  // A list, even empty, says the output holds no in-band references (output-refs.ts); null only
  // for a port caller from before the list, whose stored value may hold them.
  let outputRefs: string | null = "[]";
  if (result.ok) {
    try {
      full = encodePayload(result.value, `the output of run ${runId}`, x.payloadLimit, { runId });
      const stored = x.storedOutput();
      if (stored) {
        const held = stored.refs ? storedWithRefs(stored.value, stored.refs) : undefined;
        output = encodePayload(held ? held.value : stored.value, `the stored output of run ${runId}`, x.payloadLimit, { runId });
        outputRefs = held ? JSON.stringify(held.refs) : null;
      } else output = full;
    } catch (e) {
      error = e;
    }
  }
  if (error === undefined) {
    await x.writer.write(
      { run: { status: "completed", output, outputRefs, releaseLease: true, lostClaims: 0, pauseRequested: false }, events: [{ type: "run.completed", data: {} }] },
      await parentWake(x.store, x.run, { status: "completed", output: decodePayload(full) }),
    );
    return { kind: "completed" };
  }
  const rec = errorRecord(error);
  await x.writer.write(
    { run: { status: "failed", error: encodeError(error), releaseLease: true, lostClaims: 0, pauseRequested: false }, events: [{ type: "run.failed", data: { error: rec.message, code: rec.code ?? null, ...(rec.fix ? { fix: rec.fix } : {}) } }] },
    await parentWake(x.store, x.run, { status: "failed", error: rec }),
  );
  return { kind: "failed", error: rec.message };
}
