/**
 * Redaction runs on the worker's event loop over every payload up to the 1 MiB ceiling, so a
 * text that makes a rule scan superlinearly stalls the worker (its leases, every run it holds).
 * A megabyte of each worst case found so far (a hostile review: `sk-` and `eyJ` repeated, each
 * scanning the rest of the run from every start; key-block BEGIN lines with no END; cut marks
 * repeated; a long key block streamed one character at a time), and of every row's anchor and
 * example repeated, goes through the redactor and a stream's redaction. Linear, each takes well
 * under a second; quadratic, the first took half an hour. Nothing here is timed: a regression
 * shows as this file's timeout, far from any machine's noise.
 */
import { describe, expect, it } from "vitest";
import { Redactor } from "../../src/redaction/redactor.js";
import { SECRET_PATTERNS } from "../../src/redaction/secret-patterns.js";
import { StreamRedactor } from "../../src/redaction/stream-redactor.js";

const MIB = 1024 * 1024;
const r = Redactor.from({ secrets: ["hunter2hunter2"] });
const fill = (unit: string, n = MIB) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);

const WORST: [string, string][] = [
  ["sk- repeated", fill("sk-")],
  ["eyJ repeated", fill("eyJ")],
  ["eyJ. repeated", fill("eyJa.")],
  ["cut marks repeated", fill("Bearer abc… (5 more characters)")],
  ["BEGIN lines with no END", fill("-----BEGIN PRIVATE KEY-----\n")],
  ["BEGIN headers with words", fill("-----BEGIN A B C D E F G H ")],
  ["AKIA ids with separators", fill("AKIAIOSFODNN7EXAMPLE:::")],
  ["secret access key names and spaces", fill("aws_secret_access_key =   ")],
  ["URL users", fill("://user:")],
  ["bearer words", fill("Bearer ")],
  ["a configured value's beginning", fill("hunter2hunte")],
  ...SECRET_PATTERNS.flatMap((p): [string, string][] => [
    [`${p.rule}: its anchor's text repeated`, fill(p.examples[0]?.text.slice(0, 6) ?? "x")],
    [`${p.rule}: its first example repeated`, fill(p.examples[0]?.text ?? "x")],
  ]),
];

describe("redaction is linear in the text", () => {
  it.each(WORST)("a megabyte of %s, as plain text and as a JSON payload", (_what, text) => {
    const plain = r.plain(text);
    expect(plain.text.length).toBeGreaterThan(0);
    expect(r.json(JSON.stringify({ out: text })).text.length).toBeGreaterThan(0);
  });

  it.each(WORST.slice(0, 11))("a megabyte of %s, streamed in pieces of 200 characters", (_what, text) => {
    const s = new StreamRedactor(r);
    let out = "";
    for (let i = 0; i < text.length; i += 200) out += s.push(text.slice(i, i + 200));
    out += s.end();
    expect(out.length).toBeGreaterThan(0);
  });

  it("a 256 KiB key block streamed one character at a time: one marker, and what follows it", () => {
    const body = fill("MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n", 256 * 1024);
    const text = `-----BEGIN PRIVATE KEY-----\n${body}\n-----END PRIVATE KEY-----\nok`;
    const s = new StreamRedactor(r);
    let out = "";
    for (const ch of text) out += s.push(ch);
    out += s.end();
    expect(out).toBe("[redacted:private-key]\nok");
  });
});
