/**
 * `stead keys`: an encrypted store's keys as an operator sees them (which key-encryption keys wrap
 * them, and whether this machine holds each), setting up a new store encrypted, and rotation.
 */
import { rmSync } from "node:fs";
import { SteadError } from "../errors.js";
import { createKeyFile, defaultKeyDir, keyFileIn, keyFileProvider, keyFromEnv, type KeyChain, type KeyProvider } from "../store/encryption/key-providers.js";
import { MAC_KEY_ID, rotateKeys } from "../store/encryption/keyring.js";
import type { DataKeys } from "../store/types.js";

export interface KeysStatus {
  encrypted: boolean;
  /** The data key new values are sealed by (null for a plain store). */
  active: string | null;
  /** Whether this machine holds the keys the store's keys are wrapped by, and they unwrap them: whether the store opens here (true for a plain store). */
  held: boolean;
  /** Where this machine looks for a key by its id (STEAD_KEY_DIR, else ~/.config/stead/keys). */
  keyDir: string;
  /** `heldBy`: where this machine holds the key that wraps it (a path, an environment variable), or null. */
  keys: { id: string; purpose: "blob addresses" | "data"; kekId: string; createdAt: number; heldBy: string | null }[];
}

/** `opens`: whether the store's keyring opened with this machine's keys (a status is asked for where it may not). */
export async function keysStatus(store: DataKeys, chain: KeyChain, opens: boolean): Promise<KeysStatus> {
  const rows = await store.dataKeys();
  const data = rows.filter((r) => r.id !== MAC_KEY_ID);
  return {
    encrypted: rows.length > 0,
    active: data.at(-1)?.id ?? null,
    held: opens,
    keyDir: chain.dir,
    keys: rows.map((r) => ({ id: r.id, purpose: r.id === MAC_KEY_ID ? "blob addresses" : "data", kekId: r.kekId, createdAt: r.createdAt, heldBy: holderOf(chain, r.kekId) })),
  };
}

/** Where `chain` holds key `kekId`; null when nowhere, or where a file of its name holds another key or none. */
function holderOf(chain: KeyChain, kekId: string): string | null {
  try {
    const p = chain.find(kekId);
    return p?.holds(kekId) ? p.where : null;
  } catch (e) {
    if (e instanceof SteadError) return null;
    throw e;
  }
}

/**
 * The key to set a new store up with, or to rotate to: `keyFile` when given (an existing key
 * file is used, a missing one created), else the environment's, else a new file in the key
 * directory. `created` is the file made now, for removal if the command is refused.
 */
export function keyToUse(options: { keyFile?: string; keyDir: string; fromEnv?: boolean }): { key: KeyProvider; created: string | null } {
  if (options.keyFile !== undefined) {
    try {
      return { key: keyFileProvider(options.keyFile), created: null };
    } catch (e) {
      if (!(e instanceof SteadError) || e.code !== "STEAD_KEY_MISSING") throw e;
      const key = createKeyFile({ path: options.keyFile });
      return { key, created: key.where };
    }
  }
  const env = options.fromEnv === false ? undefined : keyFromEnv();
  if (env) return { key: env, created: null };
  const key = createKeyFile({ dir: options.keyDir });
  return { key, created: key.where };
}

/** Removes a key file made for a command that was refused: a key that wraps nothing is not left behind. */
export function discardKey(created: string | null): void {
  if (created) rmSync(created, { force: true });
}

/** What a rotation did: the new data key, how many keys were re-wrapped, and the key-encryption keys they were wrapped by before. */
export type KeyRotation = Awaited<ReturnType<typeof rotateKeys>>;

export { defaultKeyDir, keyFileIn, rotateKeys };
