/**
 * A token's secret: `stead_` and 32 random bytes in base64url (redact.ts defines the shape, so
 * the redaction and the secret cannot drift apart). Shown once, when made; the store keeps only
 * its SHA-256.
 *
 * Why a fast hash. Slow password hashes (bcrypt, scrypt, argon2) exist because people choose
 * secrets an attacker can enumerate: slowing each guess is the only defence. A 256-bit secret
 * from the system's CSPRNG cannot be enumerated at any hash speed (2^256 candidates), so a slow
 * hash would add nothing against a stolen table, yet cost every request milliseconds of CPU and
 * hand an unauthenticated caller a cheap way to load the server. No salt is needed either: salts
 * defeat precomputed tables of likely secrets, and there are none for random ones. A stolen hash
 * does not authenticate: the secret is what is presented, and it is hashed on arrival.
 *
 * What is compared, and how. A presented token is looked up by its hash: the store's index
 * compares hashes, whose timing can at most reveal something about a stored *hash*, from which
 * no secret can be recovered (SHA-256 is preimage-resistant). The row found is then checked in
 * this process by comparing its 32-byte digest with the presented token's in constant time
 * (`crypto.timingSafeEqual`), so no comparison here of secret-derived bytes ends early, whatever
 * the store did to find the row.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { TOKEN_BODY_LENGTH, TOKEN_PREFIX } from "../../redaction/redact.js";

const SECRET_BYTES = 32;
const BODY = new RegExp(`^[A-Za-z0-9_-]{${TOKEN_BODY_LENGTH}}$`);
const HEX_DIGEST = /^[0-9a-f]{64}$/;

/** A new secret. */
export function newTokenSecret(): string {
  return `${TOKEN_PREFIX}${randomBytes(SECRET_BYTES).toString("base64url")}`;
}

/**
 * Whether `presented` is a secret of the shape `newTokenSecret` makes: the prefix, then exactly
 * the base64url of 32 bytes (canonical: decoding and encoding again gives the same text). Only the
 * presented text is examined, so its timing tells nothing about any stored token.
 */
export function isWellFormedToken(presented: unknown): presented is string {
  if (typeof presented !== "string" || !presented.startsWith(TOKEN_PREFIX)) return false;
  const body = presented.slice(TOKEN_PREFIX.length);
  if (!BODY.test(body)) return false;
  const bytes = Buffer.from(body, "base64url");
  return bytes.length === SECRET_BYTES && bytes.toString("base64url") === body;
}

/** The SHA-256 of a secret, as the store keeps it: 64 lower-case hex digits. */
export function tokenHash(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** Whether a stored hash is `digest`'s, compared in constant time (both 32 bytes when well-formed). */
export function sameDigest(storedHex: string, digestHex: string): boolean {
  if (!HEX_DIGEST.test(storedHex) || !HEX_DIGEST.test(digestHex)) return false;
  return timingSafeEqual(Buffer.from(storedHex, "hex"), Buffer.from(digestHex, "hex"));
}
