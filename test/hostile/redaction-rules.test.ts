/**
 * The redactor's rule table, row by row: every real-shaped example loses its secret wherever it
 * stands (plain text, a JSON string, a key, after an escape), every look-alike and every piece of
 * a run's ordinary data (ids, hashes, UUIDs, base64) is left exactly as it was, and redacting
 * twice changes nothing. The same examples run in every payload position of a real run in
 * redaction-positions.test.ts, and split at every offset in streamed-secret.test.ts.
 */
import { describe, expect, it } from "vitest";
import { Redactor } from "../../src/redaction/redactor.js";
import { ORDINARY_TEXT, SECRET_PATTERNS } from "../../src/redaction/secret-patterns.js";

const r = Redactor.from();

/** Every 8-character window of a secret: a piece of one left behind is a leak too. */
const windows = (secret: string) => Array.from({ length: Math.max(1, secret.length - 7) }, (_, i) => secret.slice(i, i + 8));
const pieces = (text: string, secret: string) => windows(secret).filter((w) => text.includes(w));

describe("redaction rules", () => {
  for (const p of SECRET_PATTERNS) {
    describe(p.rule, () => {
      it.each(p.examples.map((e) => [e.text, e] as const))("redacts %j", (_text, e) => {
        const plain = r.plain(e.text);
        expect(pieces(plain.text, e.secret)).toEqual([]);
        expect(plain.text).toContain(`[redacted:${p.rule}]`);
        expect(plain.rules).toContain(p.rule);
        expect(r.plain(plain.text)).toEqual({ text: plain.text, rules: [] });
        // As a stored payload: a value, a key, and inside a longer string after an escape.
        const json = r.json(JSON.stringify({ out: [`line one\n${e.text}\tthen more`], [e.text]: 1 }));
        expect(pieces(json.text, e.secret)).toEqual([]);
        // String by string as plain text (a block cut short runs to its string's end, so the line after it goes too).
        const line = r.plain(`line one\n${e.text}\tthen more`).text;
        expect(JSON.parse(json.text)).toEqual({ out: [line], [plain.text]: 1 });
        if (!e.text.includes("-----BEGIN") || e.text.includes("-----END")) expect(line).toBe(`line one\n${plain.text}\tthen more`);
      });

      it.each(p.lookalikes.map((t) => [t] as const))("leaves %j alone", (t) => {
        expect(r.plain(t)).toEqual({ text: t, rules: [] });
        expect(r.json(JSON.stringify({ t }))).toEqual({ text: JSON.stringify({ t }), rules: [] });
      });
    });
  }

  it("leaves a run's ordinary data alone: ids, hashes, UUIDs, base64 blobs, prose", () => {
    for (const t of ORDINARY_TEXT) expect(r.plain(t), t).toEqual({ text: t, rules: [] });
    const data = JSON.stringify({ ordinary: ORDINARY_TEXT, n: 202401010, ok: true });
    expect(r.json(data)).toEqual({ text: data, rules: [] });
  });

  it("a secret cut short by a clip (an error's long message, a stack's dropped lines) is hidden whole, a configured one too", () => {
    const configured = Redactor.from({ secrets: ["correct-horse-battery-staple-42"] });
    for (const p of SECRET_PATTERNS) {
      for (const e of p.examples) {
        const at = e.text.indexOf(e.secret) + Math.ceil(e.secret.length / 2);
        const clipped = `${e.text.slice(0, at)}… (${e.text.length - at} more characters)`;
        const out = configured.plain(clipped).text;
        expect(out, clipped).not.toContain(e.secret.slice(0, Math.ceil(e.secret.length / 2)));
        expect(out).toMatch(/… \(\d+ more characters\)$/);
      }
    }
    const cut = configured.json(JSON.stringify({ message: "token correct-horse-batt… (7 more characters)", stack: "Error: x\n-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34Gkx\n… (12 more lines)" }));
    expect(JSON.parse(cut.text)).toEqual({ message: "token [redacted:secret-1]… (7 more characters)", stack: "Error: x\n[redacted:private-key]… (12 more lines)" });
  });

  it("every row has examples, and every example's secret is real text of the example", () => {
    for (const p of SECRET_PATTERNS) {
      expect(p.examples.length, p.rule).toBeGreaterThan(0);
      for (const e of p.examples) expect(e.text, p.rule).toContain(e.secret);
    }
  });
});
