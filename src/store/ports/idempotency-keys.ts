/**
 * Reading and pruning control commands' idempotency keys. A key is written only by the change it
 * guards (`Commits.createRun`, a mutation's `idempotency`), in the same transaction.
 */
import type { IdempotencyRow } from "../records.js";

export interface IdempotencyKeys {
  /** A recorded idempotency key that has not expired; undefined otherwise. */
  idempotencyKey(verb: string, scope: string, key: string): Promise<IdempotencyRow | undefined>;

  /** Deletes expired idempotency keys; returns how many. */
  pruneIdempotencyKeys(): Promise<number>;

  /**
   * The digest arguments (their canonical JSON text) are recorded by, when a layer takes it
   * otherwise than SHA-256 (args-digest.ts): after redaction, keyed on an encrypted store.
   */
  readonly argsDigest?: (text: string) => string;
}
