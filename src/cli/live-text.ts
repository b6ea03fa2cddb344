import { modelStepText } from "../agent/live-text.js";
import type { Stead } from "../stead/stead.js";
import type { EventView } from "../engine/runs/views.js";

const keyOf = (d: Record<string, unknown>) => `${String(d.step)}#${String(d.attempt)}`;

/**
 * A follower's view of live model text. Deltas are shown as they arrive; once a model call is
 * journaled its deltas are deleted and a `model.text` event takes their place. A follower that
 * resumed inside that range gets the completed text once: `expand` fills the marker with the part
 * of the journaled text it has not shown yet (all of it, for a follower that saw no delta).
 */
export class LiveText {
  private readonly shown = new Map<string, string>();

  constructor(private readonly stead: Stead) {}

  /** The event to show: a delta is recorded as shown; a marker gets its text (`data.text`, `data.rest`). */
  async expand(e: EventView): Promise<EventView> {
    if (e.type === "model.delta" && Number(e.data.try ?? 1) === 1) {
      this.shown.set(keyOf(e.data), (this.shown.get(keyOf(e.data)) ?? "") + (typeof e.data.text === "string" ? e.data.text : ""));
      return e;
    }
    if (e.type !== "model.text") return e;
    const step = (await this.stead.runs.journal(e.runId)).find((s) => s.id === e.data.step);
    const text = modelStepText(step?.output) ?? "";
    const seen = this.shown.get(keyOf(e.data)) ?? "";
    this.shown.delete(keyOf(e.data));
    return { ...e, data: { ...e.data, text, rest: text.startsWith(seen) ? text.slice(seen.length) : text } };
  }
}
