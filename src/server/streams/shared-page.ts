/**
 * A page of the whole store's events as the live streams send it: each event serialised once, as
 * its SSE message (`id:` the position after it), and the page's messages joined once for the
 * streams that carry every run. Every stream is handed these same bytes. Each new run's session is
 * learnt here once per page, so a session's streams gain its new turns with no read of their own.
 */
import { isValidRunId } from "../../engine/ids.js";
import type { EventStreamPage, EventView } from "../../engine/runs/views.js";
import type { Stead } from "../../stead/stead.js";
import { withModelText } from "./model-text.js";
import { eventMessage } from "./sse.js";

export interface SharedEvent {
  readonly runId: string;
  readonly type: string;
  /** The position after this event: its SSE id. */
  readonly position: string;
  readonly bytes: Uint8Array;
  /**
   * A `run.created`'s session: the session the new run is a turn of, null for a run of none.
   * Undefined for any other event, and for a `run.created` whose session could not be learnt.
   */
  readonly session?: string | null;
}

export class SharedPage {
  private joined: Uint8Array | undefined;
  readonly runIds: ReadonlySet<string>;
  /** Sessions that gained a turn in this page. */
  readonly turns: ReadonlySet<string>;
  /** A run was created in this page whose session could not be learnt: any session may have gained it. */
  readonly unsettled: boolean;

  constructor(
    /** The position the page was read from. */
    readonly from: string | null,
    /** The position after the page. */
    readonly to: string,
    readonly events: readonly SharedEvent[],
  ) {
    this.runIds = new Set(events.map((e) => e.runId));
    const created = events.filter((e) => e.type === CREATED);
    this.turns = new Set(created.flatMap((e) => (typeof e.session === "string" ? [e.session] : [])));
    this.unsettled = created.some((e) => e.session === undefined);
  }

  /** Every event's message, in order, as one chunk (built once, on first use). */
  whole(): Uint8Array {
    if (this.joined) return this.joined;
    if (this.events.length === 1) return (this.joined = (this.events[0] as SharedEvent).bytes);
    this.joined = Buffer.concat(this.events.map((e) => e.bytes));
    return this.joined;
  }
}

/** A run's first event, committed with its row: every later event of the run follows it in the stream. */
export const CREATED = "run.created";

/**
 * The session a new run is a turn of. A turn's `run.created` names its session (engine/sessions/turns.ts,
 * since sessions began); no other run's names one. A name the redactor rewrote (its marker is no
 * id) is read from the run's row instead: one read for that run, however many streams are open.
 */
async function sessionOf(stead: Stead, e: EventView): Promise<string | null | undefined> {
  const named = e.data.session;
  if (named === undefined) return null;
  if (typeof named === "string" && isValidRunId(named)) return named;
  try {
    return (await stead.runs.get(e.runId)).sessionId;
  } catch {
    return undefined;
  }
}

export async function sharedPage(stead: Stead, from: string | null, page: EventStreamPage): Promise<SharedPage> {
  const events: SharedEvent[] = [];
  for (const [i, raw] of page.events.entries()) {
    const position = page.positions[i] ?? page.position;
    const event = await withModelText(stead, raw);
    const bytes = eventMessage(position, event);
    events.push(event.type === CREATED ? { runId: event.runId, type: event.type, position, bytes, session: await sessionOf(stead, event) } : { runId: event.runId, type: event.type, position, bytes });
  }
  return new SharedPage(from, page.position, events);
}
