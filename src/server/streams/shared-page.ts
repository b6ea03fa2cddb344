/**
 * A page of the whole store's events as the live streams send it: each event serialised once, as
 * its SSE message (`id:` the position after it), and the page's messages joined once for the
 * streams that carry every run. Every stream is handed these same bytes.
 */
import type { EventStreamPage } from "../../engine/views.js";
import type { Stead } from "../../stead/stead.js";
import { withModelText } from "./model-text.js";
import { eventMessage } from "./sse.js";

export interface SharedEvent {
  readonly runId: string;
  readonly type: string;
  /** The position after this event: its SSE id. */
  readonly position: string;
  readonly bytes: Uint8Array;
}

export class SharedPage {
  private joined: Uint8Array | undefined;
  readonly runIds: ReadonlySet<string>;

  constructor(
    /** The position the page was read from. */
    readonly from: string | null,
    /** The position after the page. */
    readonly to: string,
    readonly events: readonly SharedEvent[],
  ) {
    this.runIds = new Set(events.map((e) => e.runId));
  }

  /** Every event's message, in order, as one chunk (built once, on first use). */
  whole(): Uint8Array {
    if (this.joined) return this.joined;
    if (this.events.length === 1) return (this.joined = (this.events[0] as SharedEvent).bytes);
    this.joined = Buffer.concat(this.events.map((e) => e.bytes));
    return this.joined;
  }
}

export async function sharedPage(stead: Stead, from: string | null, page: EventStreamPage): Promise<SharedPage> {
  const events: SharedEvent[] = [];
  for (const [i, raw] of page.events.entries()) {
    const position = page.positions[i] ?? page.position;
    const event = await withModelText(stead, raw);
    events.push({ runId: event.runId, type: event.type, position, bytes: eventMessage(position, event) });
  }
  return new SharedPage(from, page.position, events);
}
