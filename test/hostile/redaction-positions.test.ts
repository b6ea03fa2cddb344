/**
 * Every row of the redaction table, in every payload position a user's code or a person fills:
 * a run's input, a step's output, a step's thrown error (and the `step.failed` event that carries
 * it), an approval's request, a person's reason for a decision, a signal's payload (sent under an
 * idempotency key, whose recorded arguments and result are payloads too), a child run's input and
 * output, and a run's output. On both stores, the database's own files or tables and an export
 * hold no example's secret afterwards, and every look-alike and every piece of ordinary run data
 * comes back exactly as it went in (no false positive in any position).
 */
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { workflow } from "../../src/index.js";
import { ORDINARY_TEXT, SECRET_PATTERNS } from "../../src/redaction/secret-patterns.js";
import { onStore, STORE_KINDS, type OnStore, storeText } from "../helpers/both-stores.js";
import { FAST_WORKER } from "../helpers/temp-store.js";

const EXAMPLES = SECRET_PATTERNS.flatMap((p) => p.examples);
const SECRETS = EXAMPLES.map((e) => e.secret);
/** Text that must survive redaction unchanged, in every position. */
const KEPT = [...SECRET_PATTERNS.flatMap((p) => p.lookalikes), ...ORDINARY_TEXT];
const carried = () => ({ secrets: EXAMPLES.map((e) => e.text), kept: KEPT });

const child = workflow("positions-child", { version: "1" }, async (ctx, input: { secrets: string[]; kept: string[] }) => ctx.step("echo", () => ({ echoed: input })));

const positions = workflow("positions", { version: "1" }, async (ctx, input: { secrets: string[]; kept: string[] }) => {
  const out = await ctx.step("output", () => ({ ...carried(), from: "step" }));
  try {
    await ctx.step("thrown", () => {
      throw new Error(`upstream failed: ${EXAMPLES.map((e) => e.text).join(" | ")} || ${KEPT.join(" | ")}`);
    });
  } catch {
    // The failed step's error is the position under test.
  }
  const decision = await ctx.approval("ship", carried());
  const signalled = await ctx.signal<{ secrets: string[]; kept: string[] }>("go");
  const kid = await ctx.child("kid", child, carried());
  return { input, out, reason: decision.reason, signalled, kid };
});

describe.each(STORE_KINDS)("every redaction rule in every payload position on %s", (kind) => {
  let s: OnStore | undefined;
  afterEach(async () => {
    await s?.cleanup();
    s = undefined;
  });

  it("stores no secret anywhere and changes nothing else", async () => {
    s = await onStore(kind, "redaction-positions");
    const { stead } = s;
    const w = stead.worker({ definitions: [positions, child], ...FAST_WORKER });
    w.start();
    try {
      await stead.runs.start(positions, carried(), { id: "pos-1" });
      await stead.runs.waitFor("pos-1", { timeoutMs: 30_000, until: (r) => r.status === "waiting" });
      await stead.runs.approve("pos-1", "ship", { by: "ann", reason: `ok: ${EXAMPLES.map((e) => e.text).join(" | ")} || ${KEPT.join(" | ")}` });
      await stead.runs.waitFor("pos-1", { timeoutMs: 30_000, until: (r) => r.status === "waiting" && r.id === "pos-1" });
      await stead.runs.signal("pos-1", "go", carried(), { idempotencyKey: "go-once" });
      const done = await stead.runs.waitFor("pos-1", { timeoutMs: 30_000 });
      expect(done.status, JSON.stringify(done.error)).toBe("completed");

      const output = JSON.stringify(done.output);
      for (const k of KEPT) expect(output.includes(JSON.stringify(k).slice(1, -1)), `the output keeps ${JSON.stringify(k)}`).toBe(true);
      const failed = (await stead.runs.journal("pos-1")).find((st) => st.id === "thrown");
      expect(JSON.stringify(failed?.error)).toContain(JSON.stringify(KEPT.join(" | ")).slice(1, -1));
    } finally {
      await w.stop({ graceMs: 500 });
    }

    let dump = "";
    await stead.admin.exportDump(new Writable({ write: (c: Buffer, _e, done) => ((dump += c.toString("utf8")), done()) }));
    for (const [where, text] of [
      ["the store", await storeText(s)],
      ["an export", dump],
    ] as const) {
      const held = SECRETS.filter((secret) => text.includes(secret) || text.includes(JSON.stringify(secret).slice(1, -1)));
      expect(held, `${where} holds these secrets`).toEqual([]);
      for (const p of SECRET_PATTERNS) expect(text.includes(`[redacted:${p.rule}]`), `${where} shows where ${p.rule} was`).toBe(true);
    }
  }, 90_000);
});
