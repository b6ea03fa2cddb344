/**
 * The redactor on its own: configured values (in plain and JSON-escaped form), environment
 * variables, and each well-known secret shape, found where it stands in JSON text (after an escape
 * too) and in plain strings; redacted JSON stays valid JSON of the same shape; ordinary text that
 * resembles a shape is left alone.
 */
import { describe, expect, it } from "vitest";
import { Redactor } from "../src/redaction/redactor.js";

const KEYS: Record<string, string> = {
  "api-key": "sk-live-0123456789abcdefghijklmn",
  "github-token": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
  "slack-token": "xoxb-1234567890-abcdefghij",
  "aws-access-key": "AKIAIOSFODNN7EXAMPLE",
  "google-api-key": "AIzaSyA-1234567890abcdefghijklmnopqrstu",
  jwt: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
  "stead-token": `stead_${"A".repeat(43)}`,
};

describe("Redactor", () => {
  it("replaces each well-known shape wherever it stands, in plain text and in JSON text after an escape", () => {
    const r = Redactor.from();
    for (const [rule, key] of Object.entries(KEYS)) {
      expect(r.plain(`x ${key} y`), rule).toEqual({ text: `x [redacted:${rule}] y`, rules: [rule] });
      const json = JSON.stringify({ out: `line one\n${key}\tthen more` });
      const red = r.json(json);
      expect(red.rules, rule).toEqual([rule]);
      expect(JSON.parse(red.text)).toEqual({ out: `line one\n[redacted:${rule}]\tthen more` });
    }
  });

  it("keeps the context of a bearer token and a URL's password, and redacts a private key block", () => {
    const r = Redactor.from();
    expect(r.plain("Authorization: Bearer abcdefghijklmnop1234.xyz").text).toBe("Authorization: Bearer [redacted:bearer-token]");
    expect(r.plain("postgres://stead:s3cr3t-pass@db:5432/x").text).toBe("postgres://stead:[redacted:url-password]@db:5432/x");
    const pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAK\n-----END RSA PRIVATE KEY-----";
    const red = r.json(JSON.stringify({ pem }));
    expect(JSON.parse(red.text)).toEqual({ pem: "[redacted:private-key]" });
  });

  it("redacts configured values and environment variables, in JSON-escaped form too, longest first", () => {
    const r = Redactor.from({ secrets: ['pa"ss\\word-1', "hunter2hunter2"], env: ["MY_TOKEN", "UNSET_ONE"] }, { MY_TOKEN: "tok-value-123" });
    const red = r.json(JSON.stringify({ a: 'pa"ss\\word-1', b: "say hunter2hunter2 twice", c: ["tok-value-123"] }));
    expect(JSON.parse(red.text)).toEqual({ a: "[redacted:secret-1]", b: "say [redacted:secret-2] twice", c: ["[redacted:env:MY_TOKEN]"] });
    expect(red.rules).toEqual(["secret-1", "secret-2", "env:MY_TOKEN"]);
    const rules = new Set<string>();
    expect(r.value({ "key hunter2hunter2": ["tok-value-123", 4] }, rules)).toEqual({ "key [redacted:secret-2]": ["[redacted:env:MY_TOKEN]", 4] });
    expect([...rules]).toEqual(["secret-2", "env:MY_TOKEN"]);
    expect(() => Redactor.from({ secrets: ["short"] })).toThrow(/shorter than 8 characters/);
    // Only inside strings: a number that holds the digits of a secret stays a number.
    const digits = Redactor.from({ secrets: ["20240101"] });
    expect(digits.json('{"day":202401010,"note":"on 20240101"}')).toEqual({ text: '{"day":202401010,"note":"on [redacted:secret-1]"}', rules: ["secret-1"] });
  });

  it("leaves ordinary text alone, and redacting twice changes nothing", () => {
    const r = Redactor.from();
    for (const t of [
      "risk-assessment-framework-v2-final",
      "task-list-for-the-whole-team-today",
      "Bearer of bad news",
      "flag bearer responsibilities-and-duties",
      "https://news.example/sk-hynix-memory-price-outlook-2024",
      "https://example.com:443?email=a@b.com",
      "see https://example.com/a:b@c",
      "AKIA is a prefix",
    ]) {
      expect(r.plain(t), t).toEqual({ text: t, rules: [] });
    }
    const once = r.plain(`k ${KEYS["api-key"] ?? ""}`).text;
    expect(r.plain(once)).toEqual({ text: once, rules: [] });
    const obj = { n: 1, s: "plain" };
    expect(r.value(obj, new Set())).toBe(obj);
  });
});
