import { SteadError } from "../../errors.js";
import type { Commits, HoldRow, IdempotencyKeys, RunReads, StepWrite, StorageRoom } from "../../store/types.js";
import { DEFAULT_HEADROOM_BYTES } from "../../store/faults.js";
import { HOLD_CHOICES, OUTCOME_UNKNOWN, type ReleaseChoice } from "../runs/holds.js";
import { onceByKey, sameArgs, type Replayable } from "./idempotency.js";
import { encodePayload } from "../payload.js";
import { atText, byText, commitOne, keyed, raced, requireRun, type ControlCall } from "./common.js";

/** Releasing holds: a person takes one of a hold's ways out. */

export interface ReleaseOptions {
  choice: ReleaseChoice;
  /** With choice "result": the step's outcome. */
  result?: unknown;
  by?: string | null;
}

const matches = (h: HoldRow, ref: string | undefined) => ref === undefined || String(h.id) === ref || h.kind === ref;

export async function findOpenHold(store: Commits & IdempotencyKeys & RunReads & StorageRoom, runId: string, ref: string | undefined): Promise<HoldRow> {
  const run = await requireRun(store, runId);
  const open = await store.holds({ runId, status: "open" });
  const describe = open.length ? open.map((h) => `${h.kind} (id ${h.id})`).join(", ") : "none";
  const hold = ref === undefined ? (open.length === 1 ? open[0] : undefined) : open.find((h) => matches(h, ref));
  if (!hold) {
    throw new SteadError(
      "STEAD_HOLD_NOT_FOUND",
      ref === undefined ? `run ${runId} (${run.status}) has no single open hold; open holds: ${describe}` : `run ${runId} has no open hold "${ref}"; open holds: ${describe}`,
      { runId, hold: ref ?? null, fix: `list holds with \`stead holds\`, or see \`stead why ${runId}\`` },
    );
  }
  return hold;
}

/**
 * A hold released already (no open one matches): the same way out again succeeds; another is
 * refused naming who took which, and when. Undefined: nothing matching was ever released.
 */
async function releasedAlready(store: Commits & IdempotencyKeys & RunReads & StorageRoom, runId: string, ref: string | undefined, o: ReleaseOptions): Promise<Replayable<HoldRow> | undefined> {
  if ((await store.holds({ runId, status: "open" })).some((h) => matches(h, ref))) return undefined;
  const released = (await store.holds({ runId, status: "released" })).filter((h) => matches(h, ref));
  const last = released[released.length - 1];
  if (!last) return undefined;
  const sameResult = o.choice !== "result" || sameArgs(await resultRecorded(store, runId, last), o.result);
  if (last.choice === o.choice && sameResult) return { ...last, already: true };
  throw new SteadError("STEAD_INVALID_STATE", `hold ${last.kind} (#${last.id}) of run ${runId} was already released with "${last.choice ?? "?"}"${byText(last.releasedBy)}${atText(last.releasedAt)}`, {
    runId,
    fix: `a hold is released once; see where the run is now: stead why ${runId}`,
  });
}

async function resultRecorded(store: Commits & IdempotencyKeys & RunReads & StorageRoom, runId: string, hold: HoldRow): Promise<unknown> {
  const entry = (await store.journal(runId)).find((s) => s.seq === hold.seq);
  return entry?.output ? (JSON.parse(entry.output) as unknown) : undefined;
}

export async function release(call: ControlCall<Commits & IdempotencyKeys & RunReads & StorageRoom>, runId: string, ref: string | undefined, o: ReleaseOptions): Promise<Replayable<HoldRow>> {
  const { store, limit, key } = call;
  return onceByKey<HoldRow>(store, keyed(key, "release", runId, { hold: ref ?? null, choice: o.choice, result: o.result }, o.by ?? null), async (keyWrite) => {
    const already = await releasedAlready(store, runId, ref, o);
    if (already) return already;
    const hold = await findOpenHold(store, runId, ref);
    const allowed = HOLD_CHOICES[hold.kind].map((c) => c.choice);
    if (!allowed.includes(o.choice)) {
      throw new SteadError("STEAD_BAD_OPTION", `choice "${o.choice}" does not apply to a ${hold.kind} hold`, {
        runId,
        fix: `choose one of: ${allowed.join(", ")}`,
      });
    }
    if (hold.kind === "storage") {
      // Only room releases it: a person's retry while the store is still full would fail again at once.
      const room = await store.checkStorage(DEFAULT_HEADROOM_BYTES);
      if (!room.ok) {
        throw new SteadError("STEAD_INVALID_STATE", `run ${runId} is held because its store cannot write, and it still cannot (${room.detail})`, {
          runId,
          fix: "free space where the store lives (or raise its size limit): the run then continues by itself",
        });
      }
    }
    if (o.choice === "result" && o.result === undefined) {
      throw new SteadError("STEAD_BAD_OPTION", "choice \"result\" needs the step's outcome", { runId, fix: "pass it as JSON with --result '{...}'" });
    }
    const steps: StepWrite[] = [];
    if (hold.kind === "ambiguous_effect") {
      const entry = (await store.journal(runId)).find((s) => s.seq === hold.seq);
      if (!entry || entry.status !== "intent") {
        throw new SteadError("STEAD_INVALID_STATE", `the journal of run ${runId} has no open intent at position ${hold.seq ?? "?"}`, {
          runId,
          fix: "the hold is stale; cancel or fork the run",
        });
      }
      const base = { seq: entry.seq, stepId: entry.stepId, kind: entry.kind, attempt: entry.attempt, startedAt: entry.startedAt, completedAt: Date.now() };
      if (o.choice === "retry") steps.push({ ...base, status: "retry", completedAt: null });
      if (o.choice === "skip") steps.push({ ...base, status: "failed", error: JSON.stringify(OUTCOME_UNKNOWN) });
      if (o.choice === "result") {
        steps.push({ ...base, status: "completed", output: encodePayload(o.result, `the result supplied for step "${entry.stepId}"`, limit, { runId, stepId: entry.stepId }) });
      }
    }
    const outcome: HoldRow = { ...hold, status: "released", choice: o.choice, releasedAt: Date.now(), releasedBy: o.by ?? null };
    const r = await commitOne(store, [
      {
        runId,
        expect: { status: ["held"], openHold: hold.id },
        releaseHolds: [{ id: hold.id, choice: o.choice, by: o.by ?? null }],
        steps,
        run: {
          status: "pending",
          lostClaims: 0,
          ...(o.choice === "accept-change" ? { fingerprint: null } : {}),
        },
        events: [{ type: "hold.released", data: { hold: hold.kind, id: hold.id, choice: o.choice, by: o.by ?? null, step: hold.stepId } }],
        ...(keyWrite ? { idempotency: keyWrite(outcome) } : {}),
      },
    ]);
    if (!r.ok) {
      const again = await releasedAlready(store, runId, ref, o);
      if (again) return again;
      throw raced(runId, r, `releasing hold ${hold.id}`);
    }
    return { ...outcome, already: false };
  });
}
