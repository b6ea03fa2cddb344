/**
 * Well-known shapes of secrets, redacted wherever they appear in what Stead stores (redactor.ts),
 * one row each, with real-shaped examples that must be redacted and look-alikes that must not
 * (test/hostile/redaction-shapes.test.ts runs every row in every payload position).
 *
 * Each shape holds literal text (its `anchor`), so a text without any anchor is passed over by
 * one cheap test, and a shape's expression only runs on texts that hold its anchor. An expression
 * matches forward from where the match starts (no lookbehind: at every position of a long text
 * that costs more than the rest together); where a match carries context (`Bearer `, `user:`),
 * only its `secret` group is replaced. Shapes run on plain text (a JSON payload is redacted
 * string by string), in table order, each on the text the rows before it left: a row that needs
 * another's match as context (an AWS secret key next to its key id) comes before that row.
 *
 * Shapes are specific on purpose: a false positive changes a user's data, so generic "long random
 * string" rules are left out (an AWS secret access key is caught only next to its name or its key
 * id), and a shape that needs a word start (`start: "word"`) is not redacted in the middle of a
 * word ("risk-…" holds "sk-").
 *
 * Every expression runs in time linear in the text: a shape that needs a word start is tried
 * only where its anchor starts a word (its anchor is where every match begins), and the others
 * bound what they scan from each place they start (no unbounded run that another start would
 * scan again). test/hostile/redaction-linear.test.ts feeds each one a megabyte of its worst case.
 *
 * `open` serves streamed text (stream-redactor.ts): it matches, at the end of a text, anything
 * that could still become a match or grow one: every non-empty prefix of a match, and a whole
 * match the next characters could extend. A stream holds such a tail back until it is decided.
 * Holding too much only delays live text; holding too little leaks a split secret.
 */
import { TOKEN_PREFIX } from "./redact.js";

export interface SecretExample {
  /** Text as a secret appears in the wild, in its context. */
  text: string;
  /** The part that must not survive redaction. */
  secret: string;
}

export interface SecretPattern {
  /** Named in the replacement, `[redacted:<rule>]`, and in the redaction's record. */
  rule: string;
  /** What it matches, for people. */
  what: string;
  /** Literal text every match contains, as a regular expression (no flags). */
  anchor: RegExp;
  /** The shape (global, with indices); with a `secret` group, only that group is replaced. */
  regex: RegExp;
  /** The shape tried at one place (sticky): for a shape that needs a word start, tried only where its anchor starts a word. */
  at: RegExp;
  /** The anchor, to find the places to try (global). */
  starts: RegExp;
  /** A possibly unfinished match at the end of a text (global, ends with `$`): see above. */
  open: RegExp;
  /** The same, tried at one place (sticky). */
  openAt: RegExp;
  /**
   * Where a match may start. `word`: at a word's start (the text's start, after a non-word
   * character, an escape `\n`, a percent-encoded byte or a terminal control sequence; its anchor
   * is where every match begins). `letter`: not right after a letter (`MY_AWS_SECRET…` starts
   * after `_`). `anywhere`.
   */
  start: "word" | "letter" | "anywhere";
  /** A further check of what was matched (the `secret` group, or the whole match). */
  valid?: (secret: string) => boolean;
  examples: readonly SecretExample[];
  /** Ordinary text that resembles the shape and must be left alone. */
  lookalikes: readonly string[];
}

/** A literal as regex atoms, one per character; `ci`: either case. */
function atoms(literal: string, ci = false): string[] {
  return [...literal].map((c) => {
    const lower = c.toLowerCase();
    const upper = c.toUpperCase();
    if (ci && lower !== upper) return `[${upper}${lower}]`;
    return c.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
  });
}

/** Any non-empty prefix of a sequence of atoms: `a(?:b(?:c)?)?`. */
function prefixes(parts: readonly string[]): string {
  let out = "";
  for (let i = parts.length - 1; i >= 0; i--) out = i === parts.length - 1 ? (parts[i] ?? "") : `${parts[i] ?? ""}(?:${out})?`;
  return out;
}

/** The text of a literal as a regex (either case with `ci`). */
const lit = (literal: string, ci = false) => atoms(literal, ci).join("");
/** Any non-empty prefix of a literal. */
const partial = (literal: string, ci = false) => prefixes(atoms(literal, ci));

interface Row extends Omit<SecretPattern, "anchor" | "regex" | "at" | "starts" | "open" | "openAt" | "start"> {
  anchor: string;
  regex: string;
  /** Alternatives, each matching up to the end of a text. */
  open: readonly string[];
  start?: SecretPattern["start"];
}

const row = (r: Row): SecretPattern => ({
  rule: r.rule,
  what: r.what,
  anchor: new RegExp(r.anchor),
  regex: new RegExp(r.regex, "dg"),
  at: new RegExp(r.regex, "dy"),
  starts: new RegExp(r.anchor, "g"),
  open: new RegExp(`(?:${r.open.join("|")})$`, "g"),
  openAt: new RegExp(`(?:${r.open.join("|")})$`, "y"),
  start: r.start ?? "word",
  ...(r.valid ? { valid: r.valid } : {}),
  examples: r.examples,
  lookalikes: r.lookalikes,
});

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** Whether base64 text decodes to printable `user:password` credentials (an HTTP Basic header's value), in UTF-8. */
function basicCredentials(b64: string): boolean {
  let decoded: string;
  try {
    decoded = UTF8.decode(Buffer.from(b64, "base64"));
  } catch {
    return false;
  }
  // eslint-disable-next-line no-control-regex -- control characters are what ordinary base64 words decode to.
  return decoded.length >= 3 && decoded.includes(":") && !/[\u0000-\u001f\u007f-\u009f\ufffd]/.test(decoded);
}

/** A run of 16 letters and digits: what a key holds and a slug ("sk-hynix-memory-price-outlook") does not. */
const holdsKeyRun = (match: string) => /[A-Za-z0-9]{16}/.test(match);

const PEM_WORDS = "(?:[A-Z0-9]+ )*";
const PEM_KEY = `PRIVATE KEY(?: BLOCK)?`;
const PEM_END = `-----END ${PEM_WORDS}${PEM_KEY}-----`;
/** A key block's body: it never runs past another block's BEGIN (each BEGIN is scanned from once). */
const PEM_BODY = `(?:(?!-----BEGIN )[^"])`;
const AWS_SECRET = "[A-Za-z0-9/+]";
/** `aws_secret_access_key`, `AWS_SECRET_ACCESS_KEY`, `SecretAccessKey`, `secret-access-key`… */
const AWS_SECRET_NAME = `(?:${lit("aws", true)}[_-]?)?${lit("secret", true)}[_-]?${lit("access", true)}[_-]?${lit("key", true)}`;
const AWS_SECRET_NAME_PARTS = [...atoms("secret", true), "[_-]?", ...atoms("access", true), "[_-]?", ...atoms("key", true)];
const AWS_ID = "(?:AKIA|ASIA)[0-9A-Z]{16}";
const AWS_ID_SEPARATOR = `[\\s"',:;=|]`;
const BEARER = lit("bearer", true);
const BASIC = lit("basic", true);
/** The space after an HTTP auth scheme: whitespace, `%20` in an encoded header, `+` in a form-encoded one. */
const SCHEME_GAP = "(?:\\s{1,4}|%20|\\+)";
const SCHEME_GAP_OPEN = "(?:\\s{1,4}|%(?:2(?:0)?)?|\\+)";
const BEARER_TOKEN = "(?=[A-Za-z._~+/-]*[0-9])[A-Za-z0-9._~+/-]{16,}=*";
const URL_USER = `[^:/?#\\s"@\\\\]{0,200}`;
const URL_SECRET = `[^\\s"/?#\\\\]`;
const SLACK_HOOK = `hooks\\.slack\\.com/`;

const SAMPLE_PUBLIC_BODY = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u";
const SAMPLE_AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const SAMPLE_PEM_BODY = "MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\nKUpRKfFLfRYC9AIKjbJTWit+CqvjWYzvQwECAwEAAQ==";

export const SECRET_PATTERNS: readonly SecretPattern[] = [
  row({
    rule: "private-key",
    what: "a PEM private key block (RSA, EC, DSA, OpenSSH, PKCS#8, encrypted, PGP)",
    anchor: "PRIVATE KEY",
    // A block cut short (no END line: `head -3 id_rsa`, a tool's own clip) runs to the end of its text, the next block or a quote.
    regex: `-----BEGIN ${PEM_WORDS}${PEM_KEY}-----${PEM_BODY}*?(?:${PEM_END}|$|(?=-----BEGIN |"))`,
    open: [
      partial("-----BEGIN "),
      `-----BEGIN ${PEM_WORDS}[A-Z0-9]*`,
      `-----BEGIN ${PEM_WORDS}${PEM_KEY}-{1,4}`,
      `-----BEGIN ${PEM_WORDS}${PEM_KEY}-----(?:(?!${PEM_END})${PEM_BODY})*`,
    ],
    start: "anywhere",
    examples: [
      { text: `key:\n-----BEGIN RSA PRIVATE KEY-----\n${SAMPLE_PEM_BODY}\n-----END RSA PRIVATE KEY-----\ndone`, secret: SAMPLE_PEM_BODY },
      { text: `-----BEGIN PRIVATE KEY-----\n${SAMPLE_PEM_BODY}\n-----END PRIVATE KEY-----`, secret: SAMPLE_PEM_BODY },
      { text: `-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----`, secret: "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW" },
      { text: `-----BEGIN ENCRYPTED PRIVATE KEY-----\n${SAMPLE_PEM_BODY}\n-----END ENCRYPTED PRIVATE KEY-----`, secret: SAMPLE_PEM_BODY },
      { text: `$ head -3 id_rsa\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw\n7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFc\n`, secret: "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw" },
      { text: `-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF0Tz2gBCADLa6Wq9Jc0fO1v2Y0xk3Q\n-----END PGP PRIVATE KEY BLOCK-----`, secret: "lQOYBF0Tz2gBCADLa6Wq9Jc0fO1v2Y0xk3Q" },
    ],
    lookalikes: [
      `-----BEGIN CERTIFICATE-----\n${SAMPLE_PUBLIC_BODY}\n-----END CERTIFICATE-----`,
      `-----BEGIN PUBLIC KEY-----\n${SAMPLE_PUBLIC_BODY}\n-----END PUBLIC KEY-----`,
      "the PRIVATE KEY header names the format",
      "---\ntitle: notes\n---",
    ],
  }),
  // Before aws-access-key: it needs the key id as context.
  row({
    rule: "aws-secret-key",
    what: "an AWS secret access key after its name (`AWS_SECRET_ACCESS_KEY=`, `aws_secret_access_key =`, `\"SecretAccessKey\": \"…\"`)",
    anchor: `${lit("secret", true)}[_-]?${lit("access", true)}`,
    regex: `${AWS_SECRET_NAME}["']?(?:\\s{0,16}[:=]\\s{0,16}|\\s{1,16})["']?(?<secret>${AWS_SECRET}{40})(?![A-Za-z0-9/+=])`,
    // Its name without `aws_` is enough to find it: no `aws` alone is held back.
    open: [`(?:${lit("aws", true)}[_-]?)?${prefixes(AWS_SECRET_NAME_PARTS)}`, `${AWS_SECRET_NAME}["']?\\s{0,16}[:=]?\\s{0,16}["']?${AWS_SECRET}{0,40}`],
    start: "letter",
    examples: [
      { text: `export AWS_SECRET_ACCESS_KEY=${SAMPLE_AWS_SECRET}`, secret: SAMPLE_AWS_SECRET },
      { text: `[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = ${SAMPLE_AWS_SECRET}\n`, secret: SAMPLE_AWS_SECRET },
      { text: `{"AccessKeyId": "ASIAIOSFODNN7EXAMPLE", "SecretAccessKey": "${SAMPLE_AWS_SECRET}"}`, secret: SAMPLE_AWS_SECRET },
      { text: `aws configure set aws-secret-access-key ${SAMPLE_AWS_SECRET}`, secret: SAMPLE_AWS_SECRET },
    ],
    lookalikes: ["the secret_access_key setting is documented below", "secretAccessKey: undefined", `SecretAccessKey ${"A".repeat(41)}`],
  }),
  row({
    rule: "aws-secret-key",
    what: "an AWS secret access key right after its key id (`AKIA…:secret`, `AKIA…,secret`)",
    anchor: "AKIA|ASIA",
    regex: `${AWS_ID}${AWS_ID_SEPARATOR}{1,8}(?<secret>${AWS_SECRET}{40})(?![A-Za-z0-9/+=])`,
    open: [`${AWS_ID}${AWS_ID_SEPARATOR}{1,8}${AWS_SECRET}{0,40}`],
    examples: [
      { text: `creds AKIAIOSFODNN7EXAMPLE:${SAMPLE_AWS_SECRET} for the bucket`, secret: SAMPLE_AWS_SECRET },
      { text: `Access key ID,Secret access key\nAKIAIOSFODNN7EXAMPLE,${SAMPLE_AWS_SECRET}\n`, secret: SAMPLE_AWS_SECRET },
    ],
    lookalikes: [],
  }),
  row({
    rule: "aws-access-key",
    what: "an AWS access key id (`AKIA…`, `ASIA…`)",
    anchor: "AKIA|ASIA",
    regex: `${AWS_ID}(?![0-9A-Za-z])`,
    open: [partial("AKIA"), partial("ASIA"), "(?:AKIA|ASIA)[0-9A-Z]{0,16}"],
    examples: [{ text: "id AKIA2E0A8F3B244C9986 used", secret: "2E0A8F3B244C9986" }],
    lookalikes: ["AKIA is a prefix", "AKIAIOSFODNN7EXAMPLEandmore"],
  }),
  row({
    rule: "api-key",
    what: "OpenAI and Anthropic keys (`sk-…`, `sk-proj-…`, `sk-ant-…`, `sk-live-…`), Stripe keys (`sk_live_…`, `rk_test_…`)",
    anchor: "sk-|[srp]k_",
    regex: "(?:sk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{20,}|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,})",
    valid: holdsKeyRun,
    open: [partial("sk-"), partial("sk_"), partial("rk_"), partial("pk_"), "sk-[A-Za-z0-9_-]*", "[srp]k_[A-Za-z0-9_]*"],
    examples: [
      { text: "OPENAI_API_KEY=sk-proj-4eC39HqLyjWDarjtT1zdp7dcAbCdEfGh", secret: "4eC39HqLyjWDarjtT1zdp7dc" },
      { text: "key sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345 ok", secret: "abcdefghijklmnopqrstuvwxyz012345" },
      { text: "\u001b[31msk-live-4eC39HqLyjWDarjtT1zdp7dc\u001b[0m", secret: "4eC39HqLyjWDarjtT1zdp7dc" },
      { text: "\u001b[1;38;2;255;100;0msk-live-9fK28GpMxkVCbqsiS0ycq6cb\u001b[0m", secret: "9fK28GpMxkVCbqsiS0ycq6cb" },
      { text: "\u001b[2K\u001b[1Gsk-live-7hJ51LrNzmXEdsukU2aes8ef", secret: "7hJ51LrNzmXEdsukU2aes8ef" },
      { text: "https://api.example/v1?key%3Dsk-live-4eC39HqLyjWDarjtT1zdp7dc", secret: "4eC39HqLyjWDarjtT1zdp7dc" },
      { text: "https://proxy.example/?u=https%3A%2F%2Fapi.example%2Fv1%3Fkey%253Dsk-live-2dB17FoLwjUAaprhR9xbp5ba", secret: "2dB17FoLwjUAaprhR9xbp5ba" },
      { text: "stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", secret: "4eC39HqLyjWDarjtT1zdp7dc" },
    ],
    lookalikes: ["risk-assessment-framework-v2-final", "task-list-for-the-whole-team-today", "https://news.example/sk-hynix-memory-price-outlook-2024", "desk_live_updates"],
  }),
  row({
    rule: "github-token",
    what: "GitHub tokens (`ghp_…`, `gho_…`, `ghs_…`, `github_pat_…`)",
    anchor: "gh[pousr]_|github_pat_",
    regex: "(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
    open: [partial("gh"), "gh[pousr](?:_[A-Za-z0-9]*)?", partial("github_pat_"), "github_pat_[A-Za-z0-9_]*"],
    examples: [
      { text: "token ghp_abcdefghijklmnopqrstuvwxyz0123456789", secret: "abcdefghijklmnopqrstuvwxyz0123456789" },
      { text: "GH=github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", secret: "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz" },
    ],
    lookalikes: ["ghost_town_records", "ghp_short"],
  }),
  row({
    rule: "slack-token",
    what: "Slack tokens (`xoxb-…`, `xoxp-…`)",
    anchor: "xox",
    regex: "xox[abposr]-[A-Za-z0-9-]{10,}",
    open: [partial("xox"), "xox[abposr](?:-[A-Za-z0-9-]*)?"],
    examples: [{ text: "SLACK=xoxb-1234567890-abcdefghij", secret: "1234567890-abcdefghij" }],
    lookalikes: ["xoxo, see you", "xoxb-short"],
  }),
  row({
    rule: "slack-webhook",
    what: "a Slack incoming-webhook or workflow URL's secret path",
    anchor: "hooks\\.slack\\.com",
    regex: `${SLACK_HOOK}(?:services|workflows|triggers)/(?<secret>[A-Za-z0-9/_-]{20,})`,
    open: [partial("hooks.slack.com/"), `${SLACK_HOOK}[a-z]*`, `${SLACK_HOOK}(?:services|workflows|triggers)/[A-Za-z0-9/_-]*`],
    examples: [{ text: "post to https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX now", secret: "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX" }],
    lookalikes: ["see https://hooks.slack.com/ for docs", "https://api.slack.com/messaging/webhooks"],
  }),
  row({
    rule: "google-api-key",
    what: "Google API keys (`AIza…`)",
    anchor: "AIza",
    regex: "AIza[0-9A-Za-z_-]{35}",
    open: [partial("AIza"), "AIza[0-9A-Za-z_-]{0,35}"],
    examples: [{ text: "key=AIzaSyA-1234567890abcdefghijklmnopqrstu", secret: "SyA-1234567890abcdefghijklmnopqrstu" }],
    lookalikes: ["AIza is short"],
  }),
  row({
    rule: "google-oauth-token",
    what: "Google OAuth access tokens (`ya29.…`)",
    anchor: "ya29\\.",
    regex: "ya29\\.[0-9A-Za-z_-]{20,}",
    open: [partial("ya29."), "ya29\\.[0-9A-Za-z_-]*"],
    examples: [{ text: "access_token: ya29.a0AfH6SMBx7zqGc2Z0q9wLJ2p8yHkK1m4vXyZ", secret: "a0AfH6SMBx7zqGc2Z0q9wLJ2p8yHkK1m4vXyZ" }],
    lookalikes: ["ya29.short", "version ya29.1"],
  }),
  row({
    rule: "npm-token",
    what: "npm access tokens (`npm_…`)",
    anchor: "npm_",
    regex: "npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])",
    open: [partial("npm_"), "npm_[A-Za-z0-9]{0,36}"],
    examples: [{ text: "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789", secret: "abcdefghijklmnopqrstuvwxyz0123456789" }],
    lookalikes: ["npm_config_cache", "npm_lifecycle_event=test"],
  }),
  row({
    rule: "jwt",
    what: "JSON Web Tokens (`eyJ….eyJ….…`)",
    anchor: "eyJ",
    regex: "eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}",
    open: [partial("eyJ"), `eyJ[A-Za-z0-9_-]*(?:\\.(?:${partial("eyJ")}(?:[A-Za-z0-9_-]*(?:\\.[A-Za-z0-9_-]*)?)?)?)?`],
    examples: [
      {
        text: "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end",
        secret: "eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
      },
    ],
    lookalikes: ["eyJ alone", "eyJhbGciOiJIUzI1NiJ9 only a header"],
  }),
  row({
    rule: "bearer-token",
    what: "an HTTP bearer token after `Bearer` (any case, after spaces, a tab or `%20`)",
    anchor: "[Bb][Ee][Aa][Rr][Ee][Rr]",
    // A token holds a digit; "bearer responsibilities" does not.
    regex: `${BEARER}${SCHEME_GAP}(?<secret>${BEARER_TOKEN})`,
    open: [partial("bearer", true), `${BEARER}${SCHEME_GAP_OPEN}`, `${BEARER}${SCHEME_GAP}[A-Za-z0-9._~+/-]+=*`],
    examples: [
      { text: "Authorization: Bearer abcdefghijklmnop1234.xyz", secret: "abcdefghijklmnop1234.xyz" },
      { text: "AUTHORIZATION: BEARER zxcvbnmasdfghjkl0987654321", secret: "zxcvbnmasdfghjkl0987654321" },
      { text: "Authorization:\tBearer\tzxcvbnmasdfghjkl0987654321", secret: "zxcvbnmasdfghjkl0987654321" },
      { text: "Authorization%3A%20Bearer%20zxcvbnmasdfghjkl0987654321", secret: "zxcvbnmasdfghjkl0987654321" },
      { text: "auth=Bearer+qwertyuiopasdfgh1234567890", secret: "qwertyuiopasdfgh1234567890" },
    ],
    lookalikes: ["Bearer of bad news", "flag bearer responsibilities-and-duties", "the BEARER bond"],
  }),
  row({
    rule: "basic-auth",
    what: "HTTP Basic credentials after `Basic` (base64 of `user:password`)",
    anchor: "[Bb][Aa][Ss][Ii][Cc]",
    regex: `${BASIC}${SCHEME_GAP}(?<secret>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])`,
    open: [partial("basic", true), `${BASIC}${SCHEME_GAP_OPEN}`, `${BASIC}${SCHEME_GAP}[A-Za-z0-9+/]+={0,2}`],
    valid: basicCredentials,
    examples: [
      { text: "Authorization: Basic c3RlYWQ6aHVudGVyMmh1bnRlcjI=", secret: "c3RlYWQ6aHVudGVyMmh1bnRlcjI" },
      { text: "curl -H 'authorization: basic YWRtaW46czNjcjN0LXBhc3M='", secret: "YWRtaW46czNjcjN0LXBhc3M" },
      { text: "Authorization: Basic YWRtaW46cMOkc3N3w7ZyZC0yMDI0", secret: "YWRtaW46cMOkc3N3w7ZyZC0yMDI0" },
    ],
    lookalikes: ["Basic usage of the API", "basic configuration steps", "Basic dGhpc2lzbm90YXBhaXI="],
  }),
  row({
    rule: "url-password",
    what: "the password in a URL's `user:password@` (an `@` inside it included)",
    anchor: "://",
    // user:password@ before the host; a port followed by a query that holds an @ is not one.
    regex: `://${URL_USER}:(?<secret>${URL_SECRET}{1,200})@`,
    open: [partial("://"), `://${URL_USER}(?::${URL_SECRET}{0,200})?`],
    start: "anywhere",
    examples: [
      { text: "postgres://stead:s3cr3t-pass@db:5432/x", secret: "s3cr3t-pass" },
      { text: "DATABASE_URL=postgres://app:p@ss@w0rd-77@db.internal/app", secret: "p@ss@w0rd-77" },
      { text: "REDIS_URL=redis://:s3cr3tPassw0rd@cache.internal:6379/0", secret: "s3cr3tPassw0rd" },
    ],
    lookalikes: ["https://example.com:443?email=a@b.com", "see https://example.com/a:b@c", "https://example.com/path:with@at"],
  }),
  row({
    rule: "stead-token",
    what: "Stead access tokens (`stead_…`)",
    anchor: TOKEN_PREFIX,
    regex: `${TOKEN_PREFIX}[A-Za-z0-9_-]{32,}`,
    open: [partial(TOKEN_PREFIX), `${TOKEN_PREFIX}[A-Za-z0-9_-]*`],
    examples: [{ text: `STEAD_TOKEN=stead_${"Ab1_".repeat(10)}xyz`, secret: `${"Ab1_".repeat(10)}xyz` }],
    lookalikes: ["stead_worker_count", "stead_t_abc123"],
  }),
];

/**
 * Ordinary data of a run that no shape may touch: ids, hashes, UUIDs, base64 blobs, prose.
 * (Each row's own look-alikes are beside it above.)
 */
export const ORDINARY_TEXT: readonly string[] = [
  "run 01J9Z8Q4TK3M2X7N5V6B8C9D0E step fetch-issue attempt 2",
  "f3b1c2d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9a",
  "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
  "id 3f2504e0-4f89-11d3-9a0c-0305e82c3301",
  "blob aGVsbG8gd29ybGQsIHRoaXMgaXMgYSBiYXNlNjQgYmxvYiBvZiBhIHJ1bidzIG93biBkYXRh",
  `digest ${"Zm9vYmFyYmF6cXV4".repeat(3)}abcdefgh`,
  "ETag: W/\"0815-MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1ub3A=\"",
  "The basic idea: a bearer of news asks for the secret access policy, not a key.",
];

const WORD = /[A-Za-z0-9_]/;
/** How far back `startsWord` reads: the longest context it recognises (a 24-bit colour code is 19 characters). */
export const WORD_CONTEXT = 32;
/** A terminal control sequence right before a position (ECMA-48 CSI: a colour, an erased line, a cursor move), or its JSON escape. */
// eslint-disable-next-line no-control-regex -- the escape character is what a control sequence starts with.
const CONTROL_BEFORE = /(?:\u001b|\\u001[bB])\[[0-9;?]*[A-Za-z]$/;
/** A percent-encoded byte right before a position: `%3D`, or encoded again (`%253D`). */
const PERCENT_BEFORE = /%(?:25)*[0-9A-Fa-f]{2}$/;

/** Whether a match at `offset` of `text` starts a word (see `start`). */
export function startsWord(text: string, offset: number): boolean {
  if (offset === 0) return true;
  const before = text[offset - 1] ?? "";
  if (!WORD.test(before)) return true;
  // `\n`, `\t`… in JSON text: the letter is an escape's, not a word's.
  if ("nrtbf".includes(before) && text[offset - 2] === "\\" && text[offset - 3] !== "\\") return true;
  const behind = text.slice(Math.max(0, offset - WORD_CONTEXT), offset);
  return CONTROL_BEFORE.test(behind) || PERCENT_BEFORE.test(behind);
}
