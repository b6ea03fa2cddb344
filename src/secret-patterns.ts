/**
 * Well-known shapes of secrets, redacted wherever they appear in what Stead stores (redactor.ts).
 *
 * Each shape starts with literal text (its `anchor`), so a text without any anchor is passed over
 * by one cheap test, and a shape's expression only runs on texts that hold its anchor. An
 * expression matches forward from its anchor (no lookbehind: at every position of a long text
 * that costs more than the rest together); where a match carries context (`Bearer `, `user:`),
 * only its `secret` group is replaced. None matches a `"`, and none starts or ends inside a JSON
 * escape, so the same expression works on JSON text and on plain strings and a replacement never
 * breaks the JSON around it.
 *
 * Shapes are specific on purpose: a false positive changes a user's data, so generic "long random
 * string" rules are left out, and a shape that needs a word start (`wordStart`) is not redacted in
 * the middle of a word ("risk-…" holds "sk-").
 */
import { TOKEN_PREFIX } from "./redact.js";

export interface SecretPattern {
  /** Named in the replacement, `[redacted:<rule>]`, and in the redaction's record. */
  rule: string;
  /** Literal text every match contains, as a regular expression (no flags). */
  anchor: RegExp;
  /** The shape (global); with a `secret` group, only that group is replaced. */
  regex: RegExp;
  /** The match must start a word: at the text's start, after a non-word character, or after a JSON escape (`\n`…). */
  wordStart: boolean;
}

const pattern = (rule: string, anchor: string, source: string, wordStart = true): SecretPattern => ({ rule, anchor: new RegExp(anchor), regex: new RegExp(source, "g"), wordStart });

export const SECRET_PATTERNS: readonly SecretPattern[] = [
  pattern("private-key", "PRIVATE KEY-----", '-----BEGIN [A-Z ]*PRIVATE KEY-----[^"]*?-----END [A-Z ]*PRIVATE KEY-----', false),
  // OpenAI, Anthropic (sk-ant-…) and project keys; Stripe's live and test keys (sk_live_…, rk_…).
  // A key holds a run of 16 letters and digits; a slug ("sk-hynix-memory-price-outlook") does not.
  pattern("api-key", "sk-|[srp]k_", "(?:sk-(?:ant-|proj-|live-|test-)?(?=[A-Za-z0-9_-]*[A-Za-z0-9]{16})[A-Za-z0-9_-]{20,}|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,})"),
  pattern("github-token", "gh[pousr]_|github_pat_", "(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
  pattern("slack-token", "xox", "xox[abposr]-[A-Za-z0-9-]{10,}"),
  pattern("aws-access-key", "AKIA|ASIA", "(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Za-z])"),
  pattern("google-api-key", "AIza", "AIza[0-9A-Za-z_-]{35}"),
  pattern("jwt", "eyJ", "eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}"),
  // A token holds a digit; "bearer responsibilities" does not.
  pattern("bearer-token", "[Bb]earer", "[Bb]earer\\s{1,4}(?<secret>(?=[A-Za-z._~+/-]*[0-9])[A-Za-z0-9._~+/-]{16,}=*)"),
  // user:password@ before the host; a port followed by a query that holds an @ is not one.
  pattern("url-password", "://", '://[^:/?#\\s"@\\\\]{1,200}:(?<secret>[^@\\s"/?#\\\\]{1,200})@', false),
  pattern("stead-token", TOKEN_PREFIX, `${TOKEN_PREFIX}[A-Za-z0-9_-]{32,}`),
];

const WORD = /[A-Za-z0-9_]/;

/** Whether a match at `offset` of `text` starts a word (see `wordStart`). */
export function startsWord(text: string, offset: number): boolean {
  if (offset === 0) return true;
  const before = text[offset - 1] ?? "";
  if (!WORD.test(before)) return true;
  // `\n`, `\t`… in JSON text: the letter is an escape's, not a word's.
  return "nrtbf".includes(before) && text[offset - 2] === "\\" && text[offset - 3] !== "\\";
}
