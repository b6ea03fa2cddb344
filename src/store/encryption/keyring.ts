/**
 * An encrypted store's keys in the clear, for this process: every data key (each value names the
 * one that sealed it), the newest of them (which seals new values), and the key blob addresses
 * are keyed with. Read from the store's data_keys rows, each unwrapped by the key-encryption key
 * that wrapped it (key-providers.ts).
 *
 * Invariant: a store with data key rows, or whose runs are sealed, never yields a plain keyring:
 * no key means a refusal.
 */
import { createHmac, randomBytes } from "node:crypto";
import { SteadError } from "../../errors.js";
import type { DataKeyRow, DataKeys, DumpSigner, RunReads } from "../types.js";
import { newKey, SealError, sealedKeyId, type DataKey } from "./cipher.js";
import type { KeyChain, KeyProvider } from "./key-providers.js";

/** The id of the row holding the blob address key. */
export const MAC_KEY_ID = "mac";

/** What a keyed digest is taken for: each has a key of its own, derived from the blob address key. */
export type DigestPurpose = "idempotency arguments" | "dump signature";

export interface Keyring {
  /** Seals every new value. */
  readonly active: DataKey;
  /** Every data key by id, the active one included. */
  readonly keys: ReadonlyMap<string, Buffer>;
  /** The name a blob of content hash `hash` is kept under: a keyed digest, so the file alone never confirms a guess of a file's content. */
  readonly blobAddress: (hash: string) => string;
  /** A keyed digest of `text` (hex), where a plain one would confirm a guess of a sealed value or could be recomputed by whoever edits what it covers. */
  readonly digest: (purpose: DigestPurpose, text: string) => string;
  /** Which key-encryption keys wrap the store's keys now. */
  readonly kekIds: readonly string[];
}

const wrapContext = (id: string): string => `stead data key ${id}`;
const newDataKeyId = (): string => `d${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;

/**
 * The store's keyring, or null for a plain store. With `chain.given` a store with no keys and no
 * runs is set up encrypted (openers racing agree on the first rows written); one with runs in
 * plain text is refused. A store whose runs are sealed by a data key it has no row for is refused
 * (STEAD_DATA_TAMPERED) by every opener: deleting key rows never makes a store plain.
 */
export async function openKeyring(store: DataKeys & Pick<RunReads, "countRuns" | "listRuns">, chain: KeyChain, options: { setUp: boolean }): Promise<Keyring | null> {
  let rows = await store.dataKeys();
  const sealed = await sealedRunValue(store);
  // A key row is written before any value it seals: one missing from the first read may have been
  // written since (another opener setting the store up, a rotation), and is there on a second.
  if (sealed && !rows.some((r) => r.id === sealed.keyId)) rows = await store.dataKeys();
  if (rows.length === 0) {
    if (sealed) {
      throw new SteadError(
        "STEAD_DATA_TAMPERED",
        `the store holds values sealed by data key ${sealed.keyId} (${sealed.where}), but its data_keys table holds no key: the rows were deleted. It never opens as a plain store; nothing was read or written`,
        { fix: "restore the data_keys rows from a backup of this store (or the whole store: stead backup --restore, or stead import of its export), then open it with its key" },
      );
    }
    if (!chain.given || !options.setUp) return null;
    if ((await store.countRuns()) > 0) {
      throw new SteadError("STEAD_STORE_PLAIN", `a key was given (${chain.given.where}), but the store already holds runs in plain text; a store is encrypted from its creation only`, {
        fix: "open this store without a key (unset STEAD_ENCRYPTION_KEY / STEAD_ENCRYPTION_KEY_FILE), or encrypt a new store and start its runs there",
      });
    }
    const now = Date.now();
    // Fixed ids: openers racing to set the store up insert the same ids, and all keep the first writer's.
    const first = [await wrapped(chain.given, MAC_KEY_ID, newKey(), now), await wrapped(chain.given, "d1", newKey(), now)];
    await store.addDataKeys(first);
    rows = await store.dataKeys();
  }
  if (sealed && !rows.some((r) => r.id === sealed.keyId)) {
    throw new SteadError("STEAD_DATA_TAMPERED", `the store holds values sealed by data key ${sealed.keyId} (${sealed.where}), which its data_keys table does not hold: the row was deleted. Nothing was read or written`, {
      fix: `restore the data_keys row ${sealed.keyId} from a backup of this store (or the whole store)`,
    });
  }
  return unwrapAll(rows, chain);
}

/**
 * A sealed value of the newest, oldest or last changed run, with the data key it names. A store is
 * encrypted from its creation, so every run's input is sealed in an encrypted store and none is in a
 * plain one: these three runs tell which one a store is, its key rows aside (an encrypted store
 * whose key rows were deleted must not open as plain). Three reads of one row on an index,
 * whatever the store's size.
 */
async function sealedRunValue(store: Pick<RunReads, "listRuns">): Promise<{ keyId: string; where: string } | undefined> {
  for (const query of [{ limit: 1 }, { limit: 1, order: "asc" }, { limit: 1, sort: "updatedAt" }] as const) {
    for (const r of (await store.listRuns(query)).runs) {
      for (const [column, value] of [["input", r.input], ["output", r.output], ["error", r.error]] as const) {
        const keyId = value === null ? undefined : sealedKeyId(value);
        if (keyId !== undefined) return { keyId, where: `runs row ${r.id} ${column}` };
      }
    }
  }
  return undefined;
}

async function wrapped(p: KeyProvider, id: string, key: Buffer, createdAt: number): Promise<DataKeyRow> {
  return { id, kekId: p.id, wrapped: await p.wrap(key, wrapContext(id)), createdAt };
}

/** `whose`: how messages name the keys' owner ("the store", or a dump being imported). */
const STORE = "the store";

async function unwrapAll(rows: readonly DataKeyRow[], chain: KeyChain, whose = STORE): Promise<Keyring> {
  const keys = new Map<string, Buffer>();
  let mac: Buffer | undefined;
  let active: DataKey | undefined;
  const missing = [...new Set(rows.filter((r) => chain.find(r.kekId) === undefined).map((r) => r.kekId))];
  if (missing.length) {
    throw new SteadError("STEAD_KEY_MISSING", `${whose} is encrypted with key ${missing.join(", ")}, which is not in ${chain.describe()}; ${whose} never opens without it`, {
      // For a dump the environment names the target's own key: the dump's goes in the key directory.
      fix:
        whose === STORE
          ? `put the key file ${missing[0] ?? ""}.key in the key directory (or set STEAD_ENCRYPTION_KEY_FILE to it, or STEAD_ENCRYPTION_KEY to its key)`
          : `put the source store's key file ${missing[0] ?? ""}.key in the key directory for the import (keep STEAD_ENCRYPTION_KEY(_FILE) for the target's own key)`,
    });
  }
  for (const r of rows) {
    const p = chain.find(r.kekId);
    if (!p) continue;
    let key: Buffer;
    try {
      key = await p.unwrap(r.wrapped, r.kekId, wrapContext(r.id));
    } catch (e) {
      if (!(e instanceof SealError)) throw e;
      throw new SteadError("STEAD_KEY_WRONG", `${p.where} does not unwrap the data key ${r.id} of ${whose} (wrapped by key ${r.kekId}): the key was changed, or the wrapped key was`, {
        fix: `give the original key ${r.kekId}; if it is the right one, the wrapped key was damaged: restore it from a backup`,
      });
    }
    if (r.id === MAC_KEY_ID) mac = key;
    else {
      keys.set(r.id, key);
      active = { id: r.id, key };
    }
  }
  if (!mac || !active) {
    const lacks = mac ? "every data key" : `its blob address key (${MAC_KEY_ID})`;
    // The store's own key rows gone is tampering with the store; a dump's, a dump to take again.
    if (whose === STORE) {
      throw new SteadError("STEAD_DATA_TAMPERED", `the store's data_keys table lacks ${lacks}: the row was deleted. Nothing was read or written`, {
        fix: "restore the data_keys rows from a backup of this store (or the whole store)",
      });
    }
    throw new SteadError("STEAD_KEY_MISSING", `${whose} lacks ${lacks}`, { fix: "export it again, unedited" });
  }
  return { active, keys, kekIds: [...new Set(rows.map((r) => r.kekId))], ...keyedDigests(mac) };
}

/**
 * Every keyed digest of a store, from its blob address key (the `mac` row, which no rotation
 * replaces and an import takes with the store's data keys, so digests stay valid across both).
 * Blob addresses are HMAC-SHA-256 under that key itself (as they were first written); any other
 * digest is under a key derived from it for its purpose alone (the derivation's text, with its
 * NUL, is never a content hash), so no digest of one kind can be passed off as another, nor as a
 * blob address.
 */
function keyedDigests(mac: Buffer): Pick<Keyring, "blobAddress" | "digest"> {
  const derived = new Map<DigestPurpose, Buffer>();
  const keyFor = (purpose: DigestPurpose): Buffer => {
    let k = derived.get(purpose);
    if (!k) derived.set(purpose, (k = createHmac("sha256", mac).update(`stead digest key\0${purpose}`).digest()));
    return k;
  };
  return {
    blobAddress: (hash) => createHmac("sha256", mac).update(hash).digest("hex"),
    digest: (purpose, text) => createHmac("sha256", keyFor(purpose)).update(text).digest("hex"),
  };
}

/**
 * The keyring of a dump's or a backup's keys (`rows`, as its store kept them), unwrapped by a key
 * of `chain`: what its signature is checked with. `name` names it in a refusal.
 */
export function keyringOf(rows: readonly DataKeyRow[], chain: KeyChain, name: string): Promise<Keyring> {
  return unwrapAll(rows, chain, name);
}

/** Signs and checks encrypted dumps and backups with the keys `chain` finds (see ports/data-keys.ts). */
export function dumpSignerOf(chain: KeyChain): DumpSigner {
  return async (rows, name) => {
    const ring = await keyringOf(rows, chain, name);
    return (text) => ring.digest("dump signature", text);
  };
}

/** `rows` each wrapped by `to` instead (checked first: every row unwraps, or none is re-wrapped). */
async function rewrapped(rows: readonly DataKeyRow[], chain: KeyChain, to: KeyProvider, whose?: string): Promise<DataKeyRow[]> {
  await unwrapAll(rows, chain, whose);
  const next: DataKeyRow[] = [];
  for (const r of rows) {
    const p = chain.find(r.kekId);
    if (!p) continue;
    next.push({ ...r, kekId: to.id, wrapped: await to.wrap(await p.unwrap(r.wrapped, r.kekId, wrapContext(r.id)), wrapContext(r.id)) });
  }
  return next;
}

/**
 * The keys an import's target takes from a dump (`dumpName`): each checked to unwrap by a key
 * of `chain`, then wrapped by `to`, the target's own key (so the dump's key is not needed after),
 * or kept as wrapped when the target has none.
 */
export async function adoptedKeys(rows: readonly DataKeyRow[], chain: KeyChain, dumpName: string, to: KeyProvider | undefined): Promise<DataKeyRow[]> {
  if (to) return rewrapped(rows, chain, to, dumpName);
  await unwrapAll(rows, chain, dumpName);
  return [...rows];
}

/**
 * Wraps every key of the store by `to` and adds a new data key (new values are sealed by it; old
 * values keep theirs, so none is rewritten). The keys that wrapped them before are not needed
 * after, except to open a backup taken before.
 */
export async function rotateKeys(store: DataKeys, chain: KeyChain, to: KeyProvider): Promise<{ dataKey: string; rewrapped: number; from: string[] }> {
  const rows = await store.dataKeys();
  if (rows.length === 0) throw new SteadError("STEAD_STORE_PLAIN", "the store is not encrypted: there are no keys to rotate", { fix: "keys are set up when an encrypted store is created (stead keys init on a new store)" });
  const next = await rewrapped(rows, chain, to);
  const id = newDataKeyId();
  await store.addDataKeys([await wrapped(to, id, newKey(), Date.now())]);
  await store.rewrapDataKeys(next);
  return { dataKey: id, rewrapped: next.length, from: [...new Set(rows.map((r) => r.kekId))] };
}
