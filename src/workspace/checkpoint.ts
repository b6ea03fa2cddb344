/** Checkpoint metadata stored beside a snapshot: a flat string map, at most 4 KB as JSON. */
import { SteadError } from "../errors.js";

export const MAX_CHECKPOINT_BYTES = 4096;

/**
 * The stored form of `meta` (after `redact`, if given), or null when there is none. Fails closed,
 * never truncates: more than 4 KB is STEAD_PAYLOAD_TOO_LARGE.
 */
export function encodeCheckpoint(meta: Record<string, string> | undefined | null, redact?: (text: string) => string, runId?: string): string | null {
  if (meta === undefined || meta === null) return null;
  for (const [k, v] of Object.entries(meta)) {
    if (typeof v !== "string") {
      throw new SteadError("STEAD_BAD_OPTION", `checkpoint metadata ${JSON.stringify(k)} is a ${typeof v}, not a string`, {
        ...(runId ? { runId } : {}),
        fix: "return a Record<string, string> from checkpointMetadata",
      });
    }
  }
  const text = redact ? redact(JSON.stringify(meta)) : JSON.stringify(meta);
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > MAX_CHECKPOINT_BYTES) {
    throw new SteadError("STEAD_PAYLOAD_TOO_LARGE", `checkpoint metadata is ${bytes} bytes, over the ${MAX_CHECKPOINT_BYTES}-byte limit`, {
      ...(runId ? { runId } : {}),
      fix: "keep checkpoint metadata to a few identifiers (a commit id, an image tag), not content",
    });
  }
  return text;
}
