/**
 * An encrypted store's keys, as the store keeps them: wrapped (encrypted) by a key-encryption key
 * that lives outside the store (a key file, an environment variable, a KMS). The store never sees
 * a key in the clear; encryption/ gives the rows meaning. A store with any row is encrypted.
 */
import type { DataKeyRow } from "../records.js";

export interface DataKeys {
  /** Every key row, oldest first (ties by id). */
  dataKeys(): Promise<DataKeyRow[]>;
  /** Inserts the rows whose id is absent; a present id is left as it is (two openers racing to set one up agree on the first). */
  addDataKeys(rows: readonly DataKeyRow[]): Promise<void>;
  /** Replaces the wrapping (`kekId`, `wrapped`) of each row by id, all or none; a row absent from the store is an error. */
  rewrapDataKeys(rows: readonly Pick<DataKeyRow, "id" | "kekId" | "wrapped">[]): Promise<void>;
  /**
   * Replaces every key row by `rows`, all or none. Hazard: a value sealed by a key that goes can
   * never be opened again; only an import's target, which holds no value yet, has its keys replaced.
   */
  replaceDataKeys(rows: readonly DataKeyRow[]): Promise<void>;
}

/** A keyed digest (hex) of a text. */
export type KeyedDigest = (text: string) => string;

/**
 * The keyed digest an encrypted store's dump or backup is signed with, from that store's keys
 * (`keys`, wrapped as it kept them: unwrapped by a key this process holds, else STEAD_KEY_MISSING
 * or STEAD_KEY_WRONG naming `name`).
 */
export type DumpSigner = (keys: readonly DataKeyRow[], name: string) => Promise<KeyedDigest>;

/**
 * How the layer that gives key rows meaning (encryption/) takes an import's keys, or refuses
 * them: called once the target is known to hold no rows, before any is written; `keys` is empty
 * for a plain dump. Resolves to the undoing, for an import refused before its first row.
 */
export interface KeyAdoption {
  adoptKeys(keys: readonly DataKeyRow[], dumpName: string): Promise<() => Promise<void>>;
  /** Signs and checks the dumps and backups of encrypted stores, with the keys this layer holds. */
  dumpSigner: DumpSigner;
}
