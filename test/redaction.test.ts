/**
 * Secrets never reach the store: on both stores, a run whose input, step outputs, approval request
 * and answer, checkpoint metadata, error and events carry a configured secret, an environment
 * variable's value, a well-known key shape and a `ctx.secret` value is scanned afterwards, in the
 * database's own files (SQLite's .db and -wal) or its tables as text (Postgres, values
 * decompressed), and in an export: none of the secrets is there, a marker written beside them is.
 * Live code saw the redacted values (what it wrote to a side-effect log), and each redaction is
 * recorded (field and rule, never the value).
 */
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { workflow } from "../src/index.js";
import { REDACTED_EVENT } from "../src/store/redacting-store.js";
import { onStore, STORE_KINDS, type OnStore, storeText } from "./helpers/both-stores.js";
import { FAST_WORKER } from "./helpers/temp-store.js";

const CONFIGURED = "correct-horse-battery-staple-42";
const FROM_ENV = "env-held-value-7f3a9c1e";
const SHAPED = "sk-live-4eC39HqLyjWDarjtT1zdp7dc";
const VIA_CTX = "ctx-secret-value-b81d2e90";
const SECRETS = [CONFIGURED, FROM_ENV, SHAPED, VIA_CTX];
const MARKER = "MARKER-plain-9d1c";

process.env.STEAD_TEST_REDACT_ENV = FROM_ENV;
process.env.STEAD_TEST_CTX_SECRET = VIA_CTX;

/** What live code saw, as it saw it. */
const seen: string[] = [];

const leaky = workflow("leaky", { version: "1" }, async (ctx, input: { note: string }) => {
  const token = ctx.secret("STEAD_TEST_CTX_SECRET");
  const got = await ctx.step("fetch", () => ({ marker: MARKER, body: `key ${CONFIGURED} env ${FROM_ENV}\nsk ${SHAPED}`, token, note: input.note }));
  await ctx.step("use", () => {
    seen.push(JSON.stringify(got));
    return "used";
  });
  const decision = await ctx.approval("ship", { preview: `${MARKER} ${CONFIGURED}` });
  return { marker: MARKER, reason: decision.reason, token };
});

const failing = workflow("leaky-fail", { version: "1" }, async (ctx) => {
  try {
    await ctx.step("boom", () => {
      throw new Error(`upstream said ${MARKER} Authorization: Bearer ${SHAPED}`);
    });
  } catch (e) {
    // What live code catches is what replay will throw: the recorded, redacted error.
    seen.push(`caught: ${e instanceof Error ? e.message : String(e)}`);
    throw e;
  }
});

async function exported(s: OnStore): Promise<string> {
  let text = "";
  await s.stead.admin.exportDump(
    new Writable({
      write(chunk: Buffer, _e, done) {
        text += chunk.toString("utf8");
        done();
      },
    }),
  );
  return text;
}

describe.each(STORE_KINDS)("redaction on %s", (kind) => {
  let s: OnStore | undefined;
  afterEach(async () => {
    await s?.cleanup();
    s = undefined;
    seen.length = 0;
  });

  it("keeps every secret out of the store's files, tables and exports; live code saw what was stored; each redaction is recorded", async () => {
    s = await onStore(kind, "redaction", {
      redaction: { secrets: [CONFIGURED], env: ["STEAD_TEST_REDACT_ENV"] },
      checkpointMetadata: () => ({ image: `app:${MARKER}`, deployedWith: CONFIGURED }),
    });
    const { stead } = s;
    const w = stead.worker({ definitions: [leaky, failing], ...FAST_WORKER });
    w.start();
    try {
      await stead.runs.start(leaky, { note: `from the caller: ${CONFIGURED}` }, { id: "leak-1" });
      await stead.runs.waitFor("leak-1", { timeoutMs: 20_000, until: (r) => r.status === "waiting" });
      await stead.runs.approve("leak-1", "ship", { by: "ann", reason: `fine, key was ${SHAPED}` });
      const done = await stead.runs.waitFor("leak-1", { timeoutMs: 20_000 });
      expect(done.status).toBe("completed");
      await stead.runs.start(failing, null, { id: "fail-1" });
      expect((await stead.runs.waitFor("fail-1", { timeoutMs: 20_000 })).status).toBe("failed");

      // What live code saw is what the journal holds: redacted, with the rest intact.
      expect(seen).toHaveLength(2);
      const live = JSON.parse(seen[0] ?? "null") as Record<string, string>;
      expect(seen[1]).toMatch(/^caught: .*upstream said MARKER-plain-9d1c Authorization: Bearer \[redacted:api-key\]/);
      expect(live).toEqual({
        marker: MARKER,
        body: "key [redacted:secret-1] env [redacted:env:STEAD_TEST_REDACT_ENV]\nsk [redacted:api-key]",
        token: "[redacted:secret:STEAD_TEST_CTX_SECRET]",
        note: "from the caller: [redacted:secret-1]",
      });
      expect(done.output).toEqual({ marker: MARKER, reason: "fine, key was [redacted:api-key]", token: "[redacted:secret:STEAD_TEST_CTX_SECRET]" });

      const records = await s.rows("SELECT run_id, data FROM events WHERE type = ? ORDER BY seq", REDACTED_EVENT);
      const fields = records.flatMap((r) => (JSON.parse(String(r.data)) as { fields: { field: string; rules: string[] }[] }).fields.map((f) => `${String(r.run_id)} ${f.field}: ${f.rules.join(",")}`));
      expect(fields).toEqual(
        expect.arrayContaining([
          "leak-1 run input: secret-1",
          "leak-1 step fetch output: secret-1,env:STEAD_TEST_REDACT_ENV,api-key,secret:STEAD_TEST_CTX_SECRET",
          "leak-1 step fetch checkpoint: secret-1",
          "leak-1 wait ship request: secret-1",
          "leak-1 wait ship result: api-key",
          "fail-1 step boom error: api-key",
          "fail-1 event step.failed: api-key",
        ]),
      );
    } finally {
      await w.stop({ graceMs: 500 });
    }

    for (const [where, text] of [
      ["the store", await storeText(s)],
      ["an export", await exported(s)],
    ] as const) {
      expect(text.includes(MARKER), `${where} holds the marker (the scan reads what was stored)`).toBe(true);
      for (const secret of SECRETS) expect(text.includes(secret), `${where} holds ${secret}`).toBe(false);
    }
  }, 60_000);
});

describe("redaction with nothing configured", () => {
  let s: OnStore | undefined;
  afterEach(async () => {
    await s?.cleanup();
    s = undefined;
  });

  it("still redacts what ctx.secret read, and an idempotency key's arguments", async () => {
    s = await onStore("sqlite", "redaction-off", { redaction: { patterns: false } });
    const echo = workflow("echo-secret", { version: "1" }, async (ctx, input: { k: string }) => ctx.step("echo", () => ({ token: ctx.secret("STEAD_TEST_CTX_SECRET"), k: input.k })));
    const w = s.stead.worker({ definitions: [echo], ...FAST_WORKER });
    w.start();
    try {
      // The first run reads the secret; the second passes it as an argument under an idempotency key.
      await s.stead.runs.start(echo, { k: "plain" }, { id: "e-1" });
      await s.stead.runs.waitFor("e-1", { timeoutMs: 20_000 });
      await s.stead.runs.start(echo, { k: VIA_CTX }, { id: "e-2", idempotencyKey: "once" });
      await s.stead.runs.waitFor("e-2", { timeoutMs: 20_000 });
    } finally {
      await w.stop({ graceMs: 500 });
    }
    const text = await storeText(s);
    expect(text.includes("[redacted:secret:STEAD_TEST_CTX_SECRET]")).toBe(true);
    expect(text.includes(VIA_CTX)).toBe(false);
  }, 60_000);
});
