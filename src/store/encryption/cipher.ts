/**
 * AES-256-GCM with node's own crypto: a value sealed under a data key, bound to where it is stored
 * (the authenticated data names its table, row and column, so a ciphertext moved to another row
 * or column fails to open), and the data key's id, so any key the store holds opens it.
 *
 * Text: `$stead1:<key id>:<base64url(iv ‖ ciphertext ‖ tag)>`. No JSON text starts with `$`, so a
 * sealed value is never mistaken for a plain one. Bytes: 0xE5, the id's length, the id, iv,
 * ciphertext, tag.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

const TEXT_PREFIX = "$stead1:";
const BYTES_MAGIC = 0xe5;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface DataKey {
  readonly id: string;
  readonly key: Buffer;
}

/** What opening found instead of a value: the caller names the row. */
export type OpenFailure = "not sealed" | "unknown key" | "does not authenticate";

export class SealError extends Error {
  constructor(readonly failure: OpenFailure, readonly keyId?: string) {
    super(failure);
  }
}

function encrypt(key: Buffer, plain: Buffer, aad: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const c = createCipheriv("aes-256-gcm", key, iv);
  c.setAAD(Buffer.from(aad, "utf8"));
  const body = Buffer.concat([c.update(plain), c.final()]);
  return Buffer.concat([iv, body, c.getAuthTag()]);
}

function decrypt(key: Buffer, sealed: Buffer, aad: string, keyId: string): Buffer {
  if (sealed.byteLength < IV_BYTES + TAG_BYTES) throw new SealError("does not authenticate", keyId);
  const d = createDecipheriv("aes-256-gcm", key, sealed.subarray(0, IV_BYTES));
  d.setAAD(Buffer.from(aad, "utf8"));
  d.setAuthTag(sealed.subarray(sealed.byteLength - TAG_BYTES));
  try {
    return Buffer.concat([d.update(sealed.subarray(IV_BYTES, sealed.byteLength - TAG_BYTES)), d.final()]);
  } catch {
    throw new SealError("does not authenticate", keyId);
  }
}

export function sealText(dk: DataKey, plain: string, aad: string): string {
  return `${TEXT_PREFIX}${dk.id}:${encrypt(dk.key, Buffer.from(plain, "utf8"), aad).toString("base64url")}`;
}

export function isSealedText(value: string): boolean {
  return value.startsWith(TEXT_PREFIX);
}

export function openText(keys: ReadonlyMap<string, Buffer>, sealed: string, aad: string): string {
  if (!sealed.startsWith(TEXT_PREFIX)) throw new SealError("not sealed");
  const colon = sealed.indexOf(":", TEXT_PREFIX.length);
  if (colon < 0) throw new SealError("not sealed");
  const id = sealed.slice(TEXT_PREFIX.length, colon);
  const key = keys.get(id);
  if (!key) throw new SealError("unknown key", id);
  return decrypt(key, Buffer.from(sealed.slice(colon + 1), "base64url"), aad, id).toString("utf8");
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
