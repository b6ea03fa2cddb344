/**
 * What a Stead access token looks like in text, and its redaction. Shared by every layer: errors
 * (errors.ts, thrown.ts) redact their own text, the engine makes tokens of this shape
 * (engine/access/token-secret.ts), and the CLI redacts every line it writes to stderr.
 *
 * A token is `stead_` followed by 43 base64url characters (32 random bytes). The prefix lets
 * secret scanners and this redaction find one in any text; the pattern also catches a token cut
 * short or run on (from 32 characters after the prefix), so a mangled token is not echoed either.
 */

export const TOKEN_PREFIX = "stead_";

/** Characters of a token after its prefix: 32 bytes in unpadded base64url. */
export const TOKEN_BODY_LENGTH = 43;

/** What replaces a token in text. It keeps the prefix, so a reader sees that a token was there. */
export const REDACTED_TOKEN = `${TOKEN_PREFIX}[redacted]`;

/** Anything shaped like a token (or most of one), wherever it stands in a text. */
const TOKEN_LIKE = "stead_[A-Za-z0-9_-]{32,}";
const FIND = new RegExp(TOKEN_LIKE);
const EVERY = new RegExp(TOKEN_LIKE, "g");

/** Whether `text` holds something shaped like a token. */
export function holdsToken(text: string): boolean {
  return FIND.test(text);
}

/** `text` with every token-shaped substring replaced by {@link REDACTED_TOKEN}. */
export function redactTokens(text: string): string {
  return text.includes(TOKEN_PREFIX) ? text.replace(EVERY, REDACTED_TOKEN) : text;
}
