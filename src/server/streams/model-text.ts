/**
 * A `model.text` marker as a stream sends it: with the completed text (`data.text`) the model step
 * journaled. The marker stands where that step's `model.delta` events were before they were
 * compacted, so a client that resumed inside that range, or came later, still gets the final
 * message; one that showed some deltas shows the part of `text` after them.
 */
import { modelStepText } from "../../agent/live-text.js";
import type { EventView } from "../../engine/runs/views.js";
import type { Stead } from "../../stead/stead.js";

export async function withModelText(stead: Stead, e: EventView): Promise<EventView> {
  if (e.type !== "model.text" || typeof e.data.text === "string") return e;
  const step = (await stead.runs.journal(e.runId)).find((s) => s.id === e.data.step);
  const text = modelStepText(step?.output);
  return text === undefined ? e : { ...e, data: { ...e.data, text } };
}
