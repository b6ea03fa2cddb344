/**
 * A run listing over an encrypted store: a row whose sealed values fail to open is listed marked
 * `damaged` (its clear columns as stored, its sealed ones unread), so one changed row does not
 * hide every other run from `stead ps`, `GET /runs` and the console.
 */
import { isSteadError } from "../../errors.js";
import type { ListedRun, RunRow } from "../types.js";
import { openRun, type Opener } from "./sealed-values.js";

export function openListedRun(open: Opener, r: RunRow): ListedRun {
  try {
    return openRun(open, r);
  } catch (e) {
    if (!isSteadError(e) || e.code !== "STEAD_DATA_TAMPERED") throw e;
    return { ...r, input: "null", output: null, error: null, damaged: { code: e.code, message: e.message } };
  }
}
