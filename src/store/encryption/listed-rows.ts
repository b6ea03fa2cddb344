/**
 * Listings over an encrypted store: a row whose sealed values fail to open is listed marked
 * `damaged` (its clear columns as stored, its sealed ones empty and unread), so one changed row
 * hides no other from `stead ps`, `stead holds`, `stead sessions`, the inbox, the API and the
 * console. Only a listing's reads mark: every other read of that row refuses with the error.
 */
import { isSteadError } from "../../errors.js";
import type { HoldRow, ListedHold, ListedRun, ListedWait, RunDamage, RunRow, SessionSummary, WaitRow } from "../types.js";
import { at, openHold, openRun, openWait, type Opener } from "./sealed-values.js";

/** `open()`, or, when it fails STEAD_DATA_TAMPERED, the row `damaged` makes of that failure; any other failure is thrown. */
function marked<T>(open: () => T, damaged: (d: RunDamage) => T): T {
  try {
    return open();
  } catch (e) {
    if (!isSteadError(e) || e.code !== "STEAD_DATA_TAMPERED") throw e;
    return damaged({ code: e.code, message: e.message });
  }
}

export function openListedRun(o: Opener, r: RunRow): ListedRun {
  return marked(
    () => openRun(o, r),
    (damaged) => ({ ...r, input: "null", output: null, error: null, damaged }),
  );
}

export function openListedWait(o: Opener, w: WaitRow): ListedWait {
  return marked(
    () => openWait(o, w),
    (damaged) => ({ ...w, request: null, result: null, damaged }),
  );
}

export function openListedHold(o: Opener, h: HoldRow): ListedHold {
  return marked(
    () => openHold(o, h),
    (damaged) => ({ ...h, reason: "", details: "{}", damaged }),
  );
}

/** A session's one sealed value is its last turn's error. */
export function openListedSession(o: Opener, s: SessionSummary): SessionSummary {
  const last = s.last;
  if (!last?.error) return s;
  return marked(
    () => {
      const error = o(last.error, at.run(last.runId, "error"));
      return error === last.error ? s : { ...s, last: { ...last, error } };
    },
    (damaged) => ({ ...s, last: { ...last, error: null }, damaged }),
  );
}
