/**
 * A payload as SQLite keeps it: a sealed text as its bytes (cipher.ts), a quarter smaller than its
 * base64; any other value as it is. Reads turn the bytes back into the same text (rows.ts,
 * transfer/tables.ts), so nothing above the store sees the difference. Rows an import writes keep
 * the dump's text, and read alike.
 *
 * Hazard: only payload columns, which SQL never compares or searches: a BLOB never equals a TEXT
 * parameter, so an id or name kept this way would stop matching its own queries.
 */
import { isSealedText, sealedTextBytes } from "../encryption/cipher.js";
import { STEP_PAYLOAD_PARAMS, stepParams } from "../mutation/step-write.js";
import type { StepWrite } from "../types.js";

export const storedPayload = (v: string | null | undefined): string | Buffer | null =>
  v === null || v === undefined ? null : isSealedText(v) ? (sealedTextBytes(v) ?? v) : v;

/** {@link stepParams}, its payloads as SQLite keeps them. */
export function storedStepParams(runId: string, st: StepWrite): unknown[] {
  const params = stepParams(runId, st);
  for (const i of STEP_PAYLOAD_PARAMS) {
    const v = params[i];
    if (typeof v === "string") params[i] = storedPayload(v);
  }
  return params;
}
