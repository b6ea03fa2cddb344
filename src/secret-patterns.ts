/**
 * Well-known shapes of secrets, redacted wherever they appear in what Stead stores (redactor.ts).
 *
 * Each `source` is a regular expression without capture groups of its own, matching only the
 * secret (context such as `Bearer ` or `user:` is matched by lookbehind and kept). None matches a
 * `"`, and none starts or ends inside a JSON escape, so the same expression works on JSON text and
 * on plain strings and a replacement never breaks the JSON around it. A secret's start is found by
 * START, not `\b`: in JSON text a secret after a newline follows the `n` of `\n`.
 * Shapes are specific on purpose: a false positive changes a user's data, so generic "long random
 * string" rules are left out.
 */
import { TOKEN_PREFIX } from "./redact.js";

export interface SecretPattern {
  /** Named in the replacement, `[redacted:<rule>]`, and in the redaction's record. */
  rule: string;
  /** The regular expression's group name: `rule` as an identifier. */
  group: string;
  source: string;
  /** Text every match contains, as a regular expression: a cheap first test before `source` runs. */
  anchor: string;
}

/** The start of a word: the text's start, a non-word character, or a JSON escape (`\n`, `\t`…). */
const BEFORE = "(?:^|[^A-Za-z0-9_]|\\\\[nrtbf])";
const START = `(?<=${BEFORE})`;

const pattern = (rule: string, anchor: string, source: string): SecretPattern => ({ rule, group: rule.replace(/-/g, "_"), anchor, source });

export const SECRET_PATTERNS: readonly SecretPattern[] = [
  pattern("private-key", "PRIVATE KEY-----", "-----BEGIN [A-Z ]*PRIVATE KEY-----[^\"]*?-----END [A-Z ]*PRIVATE KEY-----"),
  // OpenAI, Anthropic (sk-ant-…) and project keys; Stripe's live and test keys (sk_live_…, rk_…).
  pattern("api-key", "sk-|[srp]k_", `${START}(?:sk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{20,}|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,})`),
  pattern("github-token", "gh[pousr]_|github_pat_", `${START}(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})`),
  pattern("slack-token", "xox", `${START}xox[abposr]-[A-Za-z0-9-]{10,}`),
  pattern("aws-access-key", "AKIA|ASIA", `${START}(?:AKIA|ASIA)[0-9A-Z]{16}\\b`),
  pattern("google-api-key", "AIza", `${START}AIza[0-9A-Za-z_-]{35}`),
  pattern("jwt", "eyJ", `${START}eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}`),
  pattern("bearer-token", "[Bb]earer", `(?<=${BEFORE}[Bb]earer\\s{1,4})[A-Za-z0-9._~+/-]{16,}=*`),
  pattern("url-password", "://", "(?<=[a-z][a-z0-9+.-]*://[^:/\\s\"@\\\\]{1,200}:)[^@\\s\"/\\\\]{1,200}(?=@)"),
  pattern("stead-token", TOKEN_PREFIX, `${START}${TOKEN_PREFIX}[A-Za-z0-9_-]{32,}`),
];
