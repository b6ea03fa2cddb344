/**
 * What Stead says about a payload lives beside it, not in it: an agent's output references are a
 * column of its run (the output holds the field as null), an approval's request kind is a column
 * of its wait. So a workflow's output or approval request that merely looks like Stead's in-band
 * forms is the user's data, read back as written. Read from the database, and through the API.
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { join } from "node:path";
import { agent, createKeyFile, createStead, scriptedModel, tool, toolResults, workflow } from "../src/index.js";
import { tamperSealed } from "./hostile/sealed-tampering.js";
import { onStore, STORE_KINDS, type OnStore } from "./helpers/both-stores.js";
import { FAST_FOLLOW, tempDir } from "./helpers/temp-store.js";
import { caught } from "./helpers/waiting.js";

/** Shaped like the in-band forms of releases before schema 13. */
const LOOKALIKE_REF = { $steadRef: { step: "s", path: [] } };
const LOOKALIKE_TOOL_REQUEST = { tool: "deploy", toolCallId: "c1", input: {}, fingerprint: "f", inputSchema: { type: "object" } };

const echo = workflow("echo-lookalikes", async (ctx) => {
  await ctx.step("s", () => "from the step");
  const d = await ctx.approval("ok", LOOKALIKE_TOOL_REQUEST);
  return { note: LOOKALIKE_REF, approved: d.approved };
});

const answerer = agent("answerer-refs", { model: scriptedModel({ respond: () => ({ text: "forty-two" }) }) });

const asker = agent("asker-kind", {
  model: scriptedModel({ respond: (p) => (toolResults(p).length === 0 ? { toolCalls: [{ name: "deploy", input: { env: "prod" } }] } : { text: "ok" }) }),
  tools: { deploy: tool({ input: z.object({ env: z.string() }), needsApproval: true, run: () => "deployed" }) },
});

describe.each(STORE_KINDS)("payload fields beside the payload on %s", (kind) => {
  let s: OnStore | undefined;
  afterEach(async () => {
    await s?.cleanup();
    s = undefined;
  });

  it("stores an agent's output references in their column, the field null in the output, and reads the output whole", async () => {
    s = await onStore(kind, "payload-fields-refs");
    const run = await s.stead.run(answerer, "what is it?", FAST_FOLLOW);
    const [row] = await s.rows("SELECT output, output_refs FROM runs WHERE id = ?", run.id);
    expect(JSON.parse(String(row?.output))).toMatchObject({ text: null });
    expect(JSON.parse(String(row?.output_refs))).toEqual([{ field: "text", step: "model-1", path: ["content", 0, "text"] }]);
    expect((await s.stead.runs.get(run.id)).output).toMatchObject({ text: "forty-two" });
  });

  it("resolves nothing of a listed run whose sealed output was changed: its output stays unread", async () => {
    const dir = tempDir();
    const keyDir = join(dir.dir, "keys");
    const key = createKeyFile({ dir: keyDir });
    try {
      s = await onStore(kind, "payload-fields-damaged", { encryption: { key: key.where, keyDir } });
      const run = await s.stead.run(answerer, "what is it?", FAST_FOLLOW);
      await s.stead.close();
      await tamperSealed(kind, s.location, "runs", "output", run.id);
      const again = createStead({ store: s.location, encryption: { key: key.where, keyDir } });
      try {
        const listed = (await again.runs.list({})).runs.find((r) => r.id === run.id);
        expect(listed?.damaged).toMatchObject({ code: "STEAD_DATA_TAMPERED" });
        expect(listed?.output).toBeNull();
      } finally {
        await again.close();
      }
    } finally {
      dir.remove();
    }
  });

  it("reads a workflow's output and approval request that look like Stead's in-band forms as the user's data", async () => {
    s = await onStore(kind, "payload-fields-lookalikes");
    const run = await s.stead.run(echo, null, FAST_FOLLOW);
    expect((await s.rows("SELECT request_kind FROM waits WHERE run_id = ?", run.id))[0]).toEqual({ request_kind: "code" });
    expect((await s.stead.runs.why(run.id)).text).not.toContain("tool call");
    expect((await s.stead.runs.waits(run.id))[0]).toMatchObject({ requestKind: "code" });
    const stead = s.stead;
    const scoped = await caught(() => stead.runs.approve(run.id, "ok", { scope: "run" }));
    expect(scoped).toMatchObject({ code: "STEAD_BAD_OPTION", message: expect.stringContaining("is not a tool approval") as string });
    await s.stead.runs.approve(run.id, "ok");
    expect((await s.stead.runs.follow(run.id, [echo], FAST_FOLLOW)).output).toEqual({ note: LOOKALIKE_REF, approved: true });
  });

  it("records an agent's tool approval as a tool call's request", async () => {
    s = await onStore(kind, "payload-fields-kind");
    const run = await s.stead.run(asker, "ship", FAST_FOLLOW);
    expect(await s.rows("SELECT name, request_kind FROM waits WHERE run_id = ?", run.id)).toEqual([{ name: "approve:call_0_0", request_kind: "tool-call" }]);
    expect((await s.stead.waits.list({ kind: "approval" })).waits).toMatchObject([{ runId: run.id, requestKind: "tool-call" }]);
    await s.stead.runs.approve(run.id, "approve:call_0_0", { scope: "run" });
    expect((await s.stead.runs.follow(run.id, [asker], FAST_FOLLOW)).status).toBe("completed");
  });
});
