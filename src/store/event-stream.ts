/**
 * What every store's event stream (`RunReads.eventsAfter`) shares: its filter checked once, and the
 * refusal of a position it cannot have given. Each dialect has its own position
 * (sqlite/event-stream.ts: a number; postgres/event-stream.ts: a transaction snapshot).
 */
import { SteadError } from "../errors.js";
import { EVENT_PAGE_DEFAULT, EVENT_PAGE_MAX, type EventStreamFilter } from "./records.js";

/** Longer than any position a store gives (a Postgres one grows by a few characters per transaction in progress). */
export const POSITION_MAX_LENGTH = 32_768;

export interface CheckedStreamFilter {
  /** Only these runs; null: every run. */
  runIds: readonly string[] | null;
  limit: number;
}

export function checkStreamFilter(filter: EventStreamFilter): CheckedStreamFilter {
  const { runId, runIds } = filter;
  if (runId !== undefined && runIds !== undefined) {
    throw new SteadError("STEAD_BAD_OPTION", "an event stream read was given both runId and runIds", { fix: "give runId for one run, or runIds for several" });
  }
  const ids = runId !== undefined ? [runId] : runIds;
  if (ids !== undefined && (!Array.isArray(ids) || ids.some((id) => typeof id !== "string"))) {
    throw new SteadError("STEAD_BAD_OPTION", "an event stream read's run ids are not a list of strings", { fix: "give runId as a string, or runIds as an array of strings" });
  }
  const limit = filter.limit ?? EVENT_PAGE_DEFAULT;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > EVENT_PAGE_MAX) {
    throw new SteadError("STEAD_BAD_OPTION", `an event stream read's limit ${JSON.stringify(limit)} is not a whole number from 1 to ${EVENT_PAGE_MAX}`, {
      fix: `ask for 1 to ${EVENT_PAGE_MAX} events per read, and read again from the position it returns`,
    });
  }
  return { runIds: ids ?? null, limit };
}

/** A position shown in a refusal: it is the caller's text, so quoted and cut short. */
const shown = (position: unknown): string => {
  const text = typeof position === "string" ? position : String(position);
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
};

export function badPosition(position: unknown, why: string): SteadError {
  return new SteadError("STEAD_BAD_POSITION", `event stream position ${shown(position)} ${why}`, {
    fix: "resume from a position this store's event stream returned, passed back unchanged, or read from the start without one",
  });
}

/** The position's text, once it is known to be a string of printable ASCII a store could have given. */
export function positionText(position: unknown): string {
  if (typeof position !== "string") throw badPosition(position, "is not a string");
  if (position.length === 0 || position.length > POSITION_MAX_LENGTH || !/^[\x21-\x7e]+$/.test(position)) {
    throw badPosition(position, position.length > POSITION_MAX_LENGTH ? `is longer than any position a store gives (${POSITION_MAX_LENGTH} characters)` : "is not one a store gives");
  }
  return position;
}

/** A base-36 number of a position, or undefined when `text` is not one (a safe integer, no sign). */
export function base36(text: string | undefined): number | undefined {
  if (text === undefined || !/^[0-9a-z]{1,11}$/.test(text)) return undefined;
  const n = Number.parseInt(text, 36);
  return Number.isSafeInteger(n) ? n : undefined;
}
