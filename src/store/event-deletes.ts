import { SteadError } from "../errors.js";
import { COMPACTABLE_EVENTS, type Unit } from "./types.js";

/** Refuses a `deleteEvents` of a type events are not compacted for (events are append-only otherwise). */
export function checkEventDeletes(units: readonly Unit[]): void {
  for (const unit of units) {
    for (const m of unit) {
      const d = m.deleteEvents;
      if (!d) continue;
      // The write that compacts must say so with an event of its own: a follower reads it in their place.
      if (!(COMPACTABLE_EVENTS as readonly string[]).includes(d.type) || typeof d.step !== "string" || !Number.isSafeInteger(d.attempt) || !m.events?.length) {
        throw new SteadError("STEAD_INVALID_MUTATION", `run ${m.runId}: events of type ${JSON.stringify(d.type)} cannot be deleted`, {
          runId: m.runId,
          fix: `only ${COMPACTABLE_EVENTS.join(", ")} events are compacted, once their step is journaled, in a write with the event that takes their place`,
        });
      }
    }
  }
}
