/**
 * The digest a control command's arguments are recorded by with its idempotency key (a repeat
 * with other arguments is refused by it). Taken by the store's layers, so that it holds no more
 * than the store does: after redaction (redacting-store.ts), and keyed on an encrypted store
 * (encryption/): a plain SHA-256 next to sealed arguments would confirm a guess of them.
 */
import { createHash } from "node:crypto";
import type { IdempotencyKeys } from "./ports/idempotency-keys.js";

/** SHA-256 hex of the text: a plain store's digest, and every store's before digests were keyed. */
export const plainDigest = (text: string): string => createHash("sha256").update(text).digest("hex");

/** The digest `store` records arguments (canonical JSON text) by. */
export const argsDigestOf = (store: Pick<IdempotencyKeys, "argsDigest">, text: string): string => store.argsDigest?.(text) ?? plainDigest(text);
