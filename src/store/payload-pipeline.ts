/**
 * The payload pipeline: the one order in which a payload (an input, a step's output or error, a
 * wait's request or answer, a hold's details, an event's data, a command's result) goes from the
 * code that made it to the store, and back.
 *
 * Write, in order:
 *   1. encode — JSON text (engine/payload.ts `encodePayload`, where the value is made);
 *   2. size and depth — the payload ceiling and depth limit, checked in the same call: over them
 *      a step fails, except an agent's tool result, which becomes the step's error outcome the
 *      model is told (EngineStepOptions.errorOutcome, decided where the value is stored);
 *   3. redact — every secret replaced (redacting-store.ts), in a copy: the caller's objects are
 *      never changed, and the write's result carries what was written (UnitResult.written);
 *   4. seal — on an encrypted store, each value sealed and bound to its row (encryption/), in a copy;
 *   5. the store's own transaction.
 * Read, the reverse: the store's row; opened (a sealed value, or a refusal naming the row);
 * nothing to undo for redaction (what was stored was redacted); decoded by the reader.
 *
 * Hazard: redaction must come before sealing: a secret sealed first would be stored, encrypted
 * but present, and no later stage could find it.
 */
import type { Redactor } from "../redaction/redactor.js";
import { encryptingStore, type EncryptingStore } from "./encryption/encrypting-store.js";
import type { KeyChain } from "./encryption/key-providers.js";
import { redactingStore } from "./redacting-store.js";
import type { Store } from "./types.js";

export interface PayloadStages {
  redactor: Redactor;
  keyChain: KeyChain;
  /** Set the store's keys up when it has none and a key is given (a new store). */
  setUp: boolean;
}

/** `store` behind stages 3 and 4 of the pipeline; `sealing` is stage 4's own handle (its keys). */
export function payloadPipeline(store: Store, stages: PayloadStages): { store: Store; sealing: EncryptingStore } {
  const sealing = encryptingStore(store, stages.keyChain, { setUp: stages.setUp });
  return { store: redactingStore(sealing, stages.redactor), sealing };
}
