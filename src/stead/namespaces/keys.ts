/** `stead.keys`: the encryption keys of the store. */
import type { KeyProvider } from "../../store/encryption/key-providers.js";
import type { KeyRotation, KeysStatus } from "../keys.js";

export interface SteadKeys {
  /**
   * Whether the store is encrypted; its keys, the key-encryption key wrapping each, and whether this
   * machine holds it. Answered where this machine lacks the key too (`held: false`): that is what
   * it reports. Any other refusal of the store (damaged, unreachable) is thrown.
   */
  status(): Promise<KeysStatus>;
  /**
   * Wraps every key of the store by `key` and seals new values by a new data key; no stored value
   * is rewritten. Refused on a plain store, and when this machine holds no key the store's keys are wrapped by.
   */
  rotate(key: KeyProvider): Promise<KeyRotation>;
}

export const KEYS_VERBS = { status: "keysStatus", rotate: "rotateKeys" } as const;
