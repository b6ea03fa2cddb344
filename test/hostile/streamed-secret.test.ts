/**
 * Text redacted as it streams: a secret split across pieces is redacted as if the text had come
 * whole. For every rule's examples, a configured value and a `ctx.secret`-style value, the text is
 * split at every offset, at every pair of offsets up to PAIR_SPAN apart (a short middle piece) and
 * farther pairs on a stride, and one character at a time: what the stream
 * lets out, joined, is exactly the whole text's redaction, and no piece let out holds any part of
 * a secret that the whole text's redaction removes (checked as the secret's every 8-character
 * window, across piece boundaries). A tail longer than the limit is redacted whole.
 */
import { describe, expect, it } from "vitest";
import { Redactor } from "../../src/redaction/redactor.js";
import { ORDINARY_TEXT, SECRET_PATTERNS } from "../../src/redaction/secret-patterns.js";
import { STREAM_HOLD_LIMIT, StreamRedactor } from "../../src/redaction/stream-redactor.js";

const CONFIGURED = "correct horse battery staple 42";
const VIA_CTX = "ctx-secret-value-b81d2e90";
const redactor = Redactor.from({ secrets: [CONFIGURED] });
redactor.add("secret:TOKEN", VIA_CTX);

const cases: { name: string; text: string; secret: string }[] = [
  ...SECRET_PATTERNS.flatMap((p) => p.examples.map((e) => ({ name: p.rule, text: `Hello ${e.text} and more`, secret: e.secret }))),
  { name: "configured value", text: `use ${CONFIGURED} now`, secret: CONFIGURED },
  { name: "ctx.secret value", text: `token=${VIA_CTX};`, secret: VIA_CTX },
  { name: "the hostile review's stream", text: "Hello Bearer zxcvbnmasdfghjkl0987654321 and goodbye", secret: "zxcvbnmasdfghjkl0987654321" },
];

/** Text no rule may touch, whole or in pieces: a piece's end must not make a match the whole text has not. */
const untouched = [...SECRET_PATTERNS.flatMap((p) => p.lookalikes), ...ORDINARY_TEXT].map((text) => ({ name: text.slice(0, 40), text }));

/**
 * Pairs of cuts: every pair at most PAIR_SPAN apart, and farther pairs with both cuts on a
 * stride of PAIR_STRIDE (every pair of a 300-character key block took seconds a case).
 */
const PAIR_SPAN = 40;
const PAIR_STRIDE = 5;

function pairs(length: number): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 1; i < length; i++) for (let j = i + 1; j < length; j++) if (j - i <= PAIR_SPAN || (i % PAIR_STRIDE === 0 && j % PAIR_STRIDE === 0)) out.push([i, j]);
  return out;
}

/** What a stream lets out for `pieces`, piece by piece. */
function stream(pieces: readonly string[]): string[] {
  const s = new StreamRedactor(redactor);
  const out = pieces.map((p) => s.push(p));
  out.push(s.end());
  return out;
}

/** Pieces of `text` cut at `cuts` (sorted offsets). */
const cutAt = (text: string, cuts: readonly number[]) => [0, ...cuts].map((c, i) => text.slice(c, cuts[i] ?? text.length));

function windows(secret: string): string[] {
  const w = Math.min(8, secret.length);
  return Array.from({ length: secret.length - w + 1 }, (_, i) => secret.slice(i, i + w));
}

function check(text: string, secret: string, pieces: readonly string[]): void {
  const whole = redactor.plain(text).text;
  const out = stream(pieces);
  const joined = out.join("");
  if (joined !== whole) expect({ pieces, joined }).toEqual({ pieces, joined: whole });
  for (const w of windows(secret)) if (joined.includes(w)) expect({ pieces, joined }).toEqual({ pieces, leaked: w });
}

describe("a streamed text is redacted as one text", () => {
  it.each(cases.map((c) => [c.name, c] as const))("%s: split at every offset, every near pair of offsets, and one character at a time", (_name, c) => {
    const { text, secret } = c;
    expect(redactor.plain(text).text).not.toContain(secret);
    for (let i = 1; i < text.length; i++) check(text, secret, cutAt(text, [i]));
    for (const cut of pairs(text.length)) check(text, secret, cutAt(text, cut));
    check(text, secret, [...text]);
  });

  it.each(untouched.map((c) => [c.name, c] as const))("%j, a look-alike or ordinary text: split at every offset and every near pair, it comes out whole and unchanged", (_name, c) => {
    expect(redactor.plain(c.text).text).toBe(c.text);
    for (let i = 1; i < c.text.length; i++) expect(stream(cutAt(c.text, [i])).join("")).toBe(c.text);
    for (const cut of pairs(c.text.length)) expect(stream(cutAt(c.text, cut)).join("")).toBe(c.text);
  });

  it("lets ordinary text out as it comes, holding back only a tail that could begin a secret", () => {
    const s = new StreamRedactor(redactor);
    expect(s.push("The answer is 42. ")).toBe("The answer is 42. ");
    expect(s.push("Use Bear")).toBe("Use ");
    expect(s.push("er abc")).toBe("");
    expect(s.push("defghijklmnop1234 then")).toBe("Bearer [redacted:bearer-token] then");
    expect(s.end()).toBe("");
  });

  it("a cut-off stream hides a held candidate that nothing will finish; one that ended lets it out as the whole text's redaction would", () => {
    const cut = new StreamRedactor(redactor);
    expect(cut.push("key sk-live-4eC39HqLyjW")).toBe("key ");
    expect(cut.end({ cutOff: true })).toBe("[redacted:api-key]");
    expect(cut.end({ cutOff: true })).toBe("");
    const ended = new StreamRedactor(redactor);
    expect(ended.push("key sk-live-4eC39HqLyjW")).toBe("key ");
    expect(ended.end()).toBe("sk-live-4eC39HqLyjW");
    const short = new StreamRedactor(redactor);
    expect(short.push("it is s")).toBe("it is ");
    expect(short.end({ cutOff: true })).toBe("s");
  });

  it("a candidate that outgrows the limit is redacted whole, and what continues it is hidden too", () => {
    const body = Array.from({ length: 40 }, (_, i) => `MIIEvQIBADANBgkqhkiG9w0BAQEFAASC${String(i).padStart(4, "0")}`).join("\n");
    expect(body.length).toBeGreaterThan(STREAM_HOLD_LIMIT * 2);
    const pem = `-----BEGIN PRIVATE KEY-----\n${body}\n-----END PRIVATE KEY-----`;
    const text = `before ${pem} after`;
    for (const size of [1, 7, 64, 300]) {
      const s = new StreamRedactor(redactor);
      const out: string[] = [];
      for (let i = 0; i < text.length; i += size) out.push(s.push(text.slice(i, i + size)));
      out.push(s.end());
      const joined = out.join("");
      expect(joined, `pieces of ${size}`).toBe("before [redacted:private-key] after");
      // Held back at most the limit (plus one piece) at any time: each piece out came no later than that.
    }
  });

  it("holds back at most the limit: an unfinished candidate longer than it is let out as one marker at once", () => {
    const s = new StreamRedactor(redactor);
    expect(s.push("x Bearer ")).toBe("x ");
    expect(s.push("a".repeat(STREAM_HOLD_LIMIT))).toBe("[redacted:bearer-token]");
    expect(s.push("bbbb1234")).toBe("");
    expect(s.push(" visible")).toBe(" visible");
  });
});
