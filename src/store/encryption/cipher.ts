/**
 * AES-256-GCM with node's own crypto: a value sealed under a data key, bound to where it is stored
 * (the authenticated data names its table, row and column, so a ciphertext moved to another row
 * or column fails to open), and the data key's id, so any key the store holds opens it.
 *
 * Text: `$stead1:<key id>:<base64url(iv ‖ ciphertext ‖ tag)>`. No JSON text starts with `$`, so a
 * sealed value is never mistaken for a plain one. What is sealed is one flag byte (0: the text
 * follows as UTF-8; other values are kept for later formats), then the text. Values are not
 * compressed: deflate cost more per step than the cipher (zlib sets up a stream per call), and a
 * compressed value's length tells how well it compresses, which leaks what it holds. So a sealed
 * value is its text plus 29 bytes, then a third more for base64. Bytes: 0xE5, the id's
 * length, the id, iv, ciphertext, tag.
 *
 * A store that keeps bytes in any column (SQLite) may keep a sealed text as its bytes instead,
 * a quarter smaller: 0xE6, the id's length, the id, iv, ciphertext, tag (see sealedTextBytes).
 * Both spellings carry the same ciphertext, so a value opens, moves and exports alike in either.
 */
import { createCipheriv, createDecipheriv, createSecretKey, randomBytes, randomFillSync, type KeyObject } from "node:crypto";

const IV_BYTES = 12;
const IV_POOL_IVS = 1024;
const TEXT_PREFIX = "$stead1:";
const PLAIN = 0;
const BYTES_MAGIC = 0xe5;
const TAG_BYTES = 16;
const TEXT_BYTES_MAGIC = 0xe6;

export interface DataKey {
  readonly id: string;
  readonly key: Buffer;
}

/**
 * Random IVs, drawn from the CSPRNG a pool at a time (one draw per IV costs more than sealing a
 * small value). Random 96-bit IVs stay safe for about 2^32 values per data key; `stead keys
 * rotate` starts a new data key.
 */
const ivPool = Buffer.alloc(IV_POOL_IVS * IV_BYTES);
let ivNext = ivPool.byteLength;
/** A fresh IV, written at the start of `into` (copied out of the pool, which is refilled in place later). */
function nextIv(into: Buffer): Buffer {
  if (ivNext >= ivPool.byteLength) {
    randomFillSync(ivPool);
    ivNext = 0;
  }
  ivPool.copy(into, 0, ivNext, ivNext + IV_BYTES);
  ivNext += IV_BYTES;
  return into.subarray(0, IV_BYTES);
}

/** Node builds a cipher faster from a KeyObject than from raw bytes; one per key, kept. */
const keyObjects = new WeakMap<Buffer, KeyObject>();
function keyObject(key: Buffer): KeyObject {
  let k = keyObjects.get(key);
  if (!k) keyObjects.set(key, (k = createSecretKey(key)));
  return k;
}

/** What opening found instead of a value: the caller names the row. */
export type OpenFailure = "not sealed" | "unknown key" | "does not authenticate";

export class SealError extends Error {
  constructor(readonly failure: OpenFailure, readonly keyId?: string) {
    super(failure);
  }
}

function encrypt(key: Buffer, plain: Buffer, aad: string): Buffer {
  const out = Buffer.allocUnsafe(IV_BYTES + plain.byteLength + TAG_BYTES);
  const iv = nextIv(out);
  const c = createCipheriv("aes-256-gcm", keyObject(key), iv);
  c.setAAD(Buffer.from(aad, "utf8"));
  // GCM is a stream cipher: the ciphertext is exactly as long as the plain text.
  const body = c.update(plain);
  c.final();
  body.copy(out, IV_BYTES);
  c.getAuthTag().copy(out, IV_BYTES + body.byteLength);
  return out;
}

function decrypt(key: Buffer, sealed: Buffer, aad: string, keyId: string): Buffer {
  if (sealed.byteLength < IV_BYTES + TAG_BYTES) throw new SealError("does not authenticate", keyId);
  const d = createDecipheriv("aes-256-gcm", keyObject(key), sealed.subarray(0, IV_BYTES));
  d.setAAD(Buffer.from(aad, "utf8"));
  d.setAuthTag(sealed.subarray(sealed.byteLength - TAG_BYTES));
  try {
    return Buffer.concat([d.update(sealed.subarray(IV_BYTES, sealed.byteLength - TAG_BYTES)), d.final()]);
  } catch {
    throw new SealError("does not authenticate", keyId);
  }
}

export function sealText(dk: DataKey, plain: string, aad: string): string {
  const body = Buffer.allocUnsafe(1 + Buffer.byteLength(plain, "utf8"));
  body[0] = PLAIN;
  body.write(plain, 1, "utf8");
  return `${TEXT_PREFIX}${dk.id}:${encrypt(dk.key, body, aad).toString("base64url")}`;
}

export function isSealedText(value: string): boolean {
  return value.startsWith(TEXT_PREFIX);
}

/** The id of the data key a sealed text names (unauthenticated: for messages), or undefined when it is not sealed. */
export function sealedKeyId(value: string): string | undefined {
  if (!value.startsWith(TEXT_PREFIX)) return undefined;
  const colon = value.indexOf(":", TEXT_PREFIX.length);
  return colon < 0 ? undefined : value.slice(TEXT_PREFIX.length, colon);
}

/** Whether `bytes` are a sealed blob's (sealBytes), by their first byte; no plain blob starts so (workspace/blob-codec.ts). */
export function isSealedBytes(bytes: Uint8Array): boolean {
  return bytes[0] === BYTES_MAGIC;
}

/** The id of the data key sealed bytes name (unauthenticated: for messages). */
export function sealedBytesKeyId(bytes: Buffer): string {
  return bytes.toString("utf8", 2, 2 + (bytes[1] ?? 0));
}

export function openText(keys: ReadonlyMap<string, Buffer>, sealed: string, aad: string): string {
  if (!sealed.startsWith(TEXT_PREFIX)) throw new SealError("not sealed");
  const colon = sealed.indexOf(":", TEXT_PREFIX.length);
  if (colon < 0) throw new SealError("not sealed");
  const id = sealed.slice(TEXT_PREFIX.length, colon);
  const key = keys.get(id);
  if (!key) throw new SealError("unknown key", id);
  const body = decrypt(key, Buffer.from(sealed.slice(colon + 1), "base64url"), aad, id);
  // Authenticated: only a holder of the data key wrote these bytes, flag included.
  if (body[0] === PLAIN) return body.toString("utf8", 1);
  throw new SealError("does not authenticate", id);
}

/**
 * `text`'s bytes when it is a sealed text they spell back exactly (else null: the caller keeps
 * the text). Checks only the spelling; opening still authenticates.
 */
export function sealedTextBytes(text: string): Buffer | null {
  if (!text.startsWith(TEXT_PREFIX)) return null;
  const colon = text.indexOf(":", TEXT_PREFIX.length);
  if (colon < 0) return null;
  const id = Buffer.from(text.slice(TEXT_PREFIX.length, colon), "utf8");
  const body = text.slice(colon + 1);
  if (id.byteLength > 255) return null;
  const out = Buffer.allocUnsafe(2 + id.byteLength + Math.floor((body.length * 3) / 4));
  out[0] = TEXT_BYTES_MAGIC;
  out[1] = id.byteLength;
  id.copy(out, 2);
  const n = out.write(body, 2 + id.byteLength, "base64url");
  const bytes = out.subarray(0, 2 + id.byteLength + n);
  // Decoding skips what base64url cannot hold (padding, other characters, a last character's
  // stray bits): only text our own encoding wrote spells back.
  return bytes.toString("base64url", 2 + id.byteLength) === body ? bytes : null;
}

/** The sealed text that `bytes` (written by sealedTextBytes) spell; null when they are not such bytes. */
export function sealedTextOfBytes(bytes: Uint8Array): string | null {
  const b = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b[0] !== TEXT_BYTES_MAGIC || b.byteLength < 2) return null;
  const idEnd = 2 + (b[1] ?? 0);
  if (b.byteLength < idEnd) return null;
  return `${TEXT_PREFIX}${b.toString("utf8", 2, idEnd)}:${b.toString("base64url", idEnd)}`;
}

export function sealBytes(dk: DataKey, plain: Uint8Array, aad: string): Buffer {
  const id = Buffer.from(dk.id, "utf8");
  return Buffer.concat([Buffer.of(BYTES_MAGIC, id.byteLength), id, encrypt(dk.key, Buffer.from(plain.buffer, plain.byteOffset, plain.byteLength), aad)]);
}

export function openBytes(keys: ReadonlyMap<string, Buffer>, sealed: Buffer, aad: string): Buffer {
  if (sealed[0] !== BYTES_MAGIC || sealed.byteLength < 2) throw new SealError("not sealed");
  const idEnd = 2 + (sealed[1] ?? 0);
  const id = sealed.subarray(2, idEnd).toString("utf8");
  const key = keys.get(id);
  if (!key) throw new SealError("unknown key", id);
  return decrypt(key, sealed.subarray(idEnd), aad, id);
}

/** A fresh 256-bit key. */
export const newKey = (): Buffer => randomBytes(32);

/** AES-256-GCM key wrapping: `wrapped` is base64url(iv ‖ ciphertext ‖ tag), bound to `context`. */
export function wrapKey(kek: Buffer, key: Buffer, context: string): string {
  return encrypt(kek, key, context).toString("base64url");
}

export function unwrapKey(kek: Buffer, wrapped: string, context: string, kekId: string): Buffer {
  return decrypt(kek, Buffer.from(wrapped, "base64url"), context, kekId);
}
