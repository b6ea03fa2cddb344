/**
 * An access token never reaches an error message or a log line: SteadErrors, descriptions of
 * thrown values (what a step's failure becomes in the journal) and checkpoint metadata redact
 * anything shaped like one, and leave every other text alone.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { SteadError } from "../src/index.js";
import { describeThrown } from "../src/thrown.js";
import { holdsToken, redactTokens, REDACTED_TOKEN } from "../src/redaction/redact.js";
import { redactSecrets } from "../src/worker/execution-deps.js";
import { newTokenSecret } from "../src/engine/access/token-secret.js";

const secret = newTokenSecret();
const body = secret.slice("stead_".length);

describe("redactTokens", () => {
  it("replaces a token, one cut short or run on, wherever it stands; other text is unchanged", () => {
    expect(redactTokens(`Authorization: Bearer ${secret}.`)).toBe(`Authorization: Bearer ${REDACTED_TOKEN}.`);
    expect(redactTokens(`a=${secret.slice(0, 40)} b=${secret}${secret}`)).toBe(`a=${REDACTED_TOKEN} b=${REDACTED_TOKEN}`);
    for (const plain of ["stead_apply_mutation", "stead_wake", "run stead_1234 of stead", "no token here"]) expect(redactTokens(plain)).toBe(plain);
    expect(holdsToken(`x ${secret}`)).toBe(true);
    expect(holdsToken(`x stead_${randomBytes(8).toString("hex")}`)).toBe(false);
  });
});

describe("errors and descriptions", () => {
  it("a SteadError redacts its message, fix and text details", () => {
    const e = new SteadError("STEAD_BAD_OPTION", `no run ${secret}`, { fix: `not ${secret}`, runId: secret, wait: `w ${secret}`, count: 3 });
    const text = JSON.stringify({ message: e.message, fix: e.fix, runId: e.runId, details: e.details, line: e.toLine() });
    expect(text).not.toContain(body);
    expect(e.message).toBe(`no run ${REDACTED_TOKEN}`);
    expect(e.details.count).toBe(3);
  });

  it("a thrown value's description redacts its message, stack, fields and keys", () => {
    const err = Object.assign(new Error(`failed calling with ${secret}`), { header: `Bearer ${secret}`, nested: { list: [secret], [secret]: 1 } });
    const d = describeThrown(err);
    expect(JSON.stringify(d)).not.toContain(body);
    expect(d.message).toBe(`failed calling with ${REDACTED_TOKEN}`);
    expect(describeThrown(`plain ${secret}`).message).toBe(`plain ${REDACTED_TOKEN}`);
    expect(JSON.stringify(describeThrown({ note: secret }))).not.toContain(body);
  });

  it("checkpoint metadata keeps no token under any key", () => {
    const out = redactSecrets(JSON.stringify({ branch: "main", note: `pushed with ${secret}`, apiKey: "k" }));
    expect(JSON.parse(out)).toEqual({ branch: "main", note: `pushed with ${REDACTED_TOKEN}`, apiKey: "[redacted]" });
  });
});
