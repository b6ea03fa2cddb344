/**
 * Tool calls that need a person: the decision record, approve / edit / deny / scope, and every
 * refusal leaving the wait as it was.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { agent, tool, workflow, type RunInfo, type Stead } from "../src/index.js";
import { callFingerprint } from "../src/agent/approvals.js";
import { FAST_FOLLOW } from "./helpers/temp-store.js";
import { providerModel, reply, type ProviderServer, type RecordedRequest } from "./helpers/provider-server.js";
import { caught } from "./helpers/waiting.js";
import { FAST_RETRY, agentTestKit, eventsOf, hasToolResults, journalShape, toolResult, transcriptProblems } from "./fixtures/agents/kit.js";

const { h, server } = agentTestKit();

type Deploy = { env: "staging" | "prod"; note?: string };

/** A deployer whose model asks to deploy to prod (call c1), then after the result, again (c2), then answers. */
async function deployer(options: { secondCall?: boolean } = {}) {
  const s = await server((req: RecordedRequest) => {
    const results = req.messages.filter((m) => m.role === "tool").length;
    if (results === 0) return reply.toolCalls([{ id: "c1", name: "deploy", args: { env: "prod" } }]);
    if (results === 1 && options.secondCall) return reply.toolCalls([{ id: "c2", name: "deploy", args: { env: "prod", note: "again" } }]);
    return reply.text("deployment handled");
  });
  const ran: Deploy[] = [];
  const def = agent("deployer", {
    model: providerModel(s.url),
    retry: FAST_RETRY,
    tools: {
      deploy: tool({
        description: "Deploy the service",
        input: z.object({ env: z.enum(["staging", "prod"]), note: z.string().optional() }),
        needsApproval: true,
        run: (i) => {
          ran.push(i);
          return `deployed to ${i.env}`;
        },
      }),
      status: tool({ input: z.object({}), idempotent: true, run: () => "green" }),
    },
  });
  return { s, def, ran };
}

async function parked(stead: Stead, def: ReturnType<typeof agent>, s: ProviderServer): Promise<RunInfo> {
  const run = await stead.run(def, "ship the release", FAST_FOLLOW);
  expect(run.status).toBe("waiting");
  expect(s.requests).toHaveLength(1);
  return run;
}

/** Everything a refused decision must leave untouched. */
async function snapshot(stead: Stead, runId: string) {
  return { run: await stead.runs.get(runId), waits: await stead.runs.waits(runId), journal: await stead.runs.journal(runId), events: await eventsOf(stead, runId) };
}

describe("a tool call that needs approval", () => {
  it("parks the run with the decision record (tool, input, fingerprint, schema), shown by waits() and why()", async () => {
    const { s, def, ran } = await deployer();
    const stead = h.create();
    const run = await parked(stead, def, s);

    const waits = await stead.runs.waits(run.id);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toMatchObject({ name: "approve:c1", kind: "approval", status: "open" });
    const request = waits[0]?.request as Record<string, unknown>;
    expect(Object.keys(request).sort()).toEqual(["fingerprint", "input", "inputSchema", "tool", "toolCallId"]);
    expect(request).toMatchObject({ tool: "deploy", toolCallId: "c1", input: { env: "prod" }, fingerprint: callFingerprint("deploy", { env: "prod" }) });
    expect(request.inputSchema).toMatchObject({ type: "object", properties: { env: { enum: ["staging", "prod"] }, note: { type: "string" } }, required: ["env"] });
    expect(callFingerprint("deploy", { env: "prod" })).not.toBe(callFingerprint("deploy", { env: "staging" }));
    expect(ran).toEqual([]);
    expect(await journalShape(stead, run.id)).toEqual([
      ["model-1", "model", "completed"],
      ["approve:c1", "approval", "waiting"],
    ]);

    const why = await stead.runs.why(run.id);
    expect(why.text).toContain(`approval of tool call deploy({"env":"prod"}) [call c1, fingerprint ${callFingerprint("deploy", { env: "prod" })}]`);
    expect(why.waysOut.map(({ verb, runId, args, supply }) => ({ verb, runId, args, supply }))).toEqual(
      expect.arrayContaining([
        { verb: "approve", runId: run.id, args: { wait: "approve:c1" }, supply: [] },
        { verb: "deny", runId: run.id, args: { wait: "approve:c1" }, supply: ["reason"] },
        { verb: "approve", runId: run.id, args: { wait: "approve:c1" }, supply: ["input"] },
        { verb: "approve", runId: run.id, args: { wait: "approve:c1", scope: "run" }, supply: [] },
      ]),
    );
  });

  it("approve: the tool runs with the model's arguments; the event and the wait record who decided", async () => {
    const { s, def, ran } = await deployer();
    const stead = h.create();
    const run = await parked(stead, def, s);
    await stead.runs.approve(run.id, "approve:c1", { by: "ann", reason: "release window" });
    const done = await stead.runs.follow(run.id, [def], FAST_FOLLOW);
    expect(done.status).toBe("completed");
    expect(ran).toEqual([{ env: "prod" }]);
    expect(toolResult(s.requests[1], "c1")).toBe("deployed to prod");
    const [ev] = await eventsOf(stead, run.id, "approval.approved");
    expect(ev?.data).toEqual({ wait: "approve:c1", by: "ann", reason: "release window" });
    const [w] = await stead.runs.waits(run.id);
    expect(w).toMatchObject({ status: "resolved", resolvedBy: "ann", result: { approved: true, by: "ann", reason: "release window" } });
    expect(typeof (w?.result as { at?: unknown }).at).toBe("number");
  });

  it("approve with edited arguments: the tool runs with the edit; the event says edited", async () => {
    const { s, def, ran } = await deployer();
    const stead = h.create();
    const run = await parked(stead, def, s);
    await stead.runs.approve(run.id, "approve:c1", { by: "ann", input: { env: "staging", note: "not prod on a Friday" } });
    const done = await stead.runs.follow(run.id, [def], FAST_FOLLOW);
    expect(done.status).toBe("completed");
    expect(ran).toEqual([{ env: "staging", note: "not prod on a Friday" }]);
    expect(toolResult(s.requests[1], "c1")).toBe("deployed to staging");
    expect(transcriptProblems(s.requests[1]?.messages ?? [])).toEqual([]);
    expect((await eventsOf(stead, run.id, "approval.approved"))[0]?.data).toMatchObject({ by: "ann", edited: true });
  });

  it("an edit that fails the schema is refused with STEAD_SCHEMA_MISMATCH naming the problem; the wait stays open, nothing is written", async () => {
    const { s, def, ran } = await deployer();
    const stead = h.create();
    const run = await parked(stead, def, s);
    const before = await snapshot(stead, run.id);

    for (const [input, problem] of [
      [{ env: "moon" }, /\/env must be equal to one of the allowed values/],
      [{ note: "no env" }, /must have required property 'env'/],
      [{ env: "prod", note: 42 }, /\/note must be string/],
      ["prod", /must be object/],
    ] as const) {
      const e = await caught(() => stead.runs.approve(run.id, "approve:c1", { by: "ann", input }));
      expect(e).toMatchObject({ code: "STEAD_SCHEMA_MISMATCH", message: expect.stringMatching(problem) as string });
      expect((e as Error).message).toContain("the edited arguments for deploy do not match its input schema");
    }
    expect(await snapshot(stead, run.id)).toEqual(before);

    // The wait still takes a valid decision.
    await stead.runs.approve(run.id, "approve:c1", { by: "ann", input: { env: "staging" } });
    expect((await stead.runs.follow(run.id, [def], FAST_FOLLOW)).status).toBe("completed");
    expect(ran).toEqual([{ env: "staging" }]);
  });

  it("deny with a reason: the model gets execution-denied with the reason; the tool never runs", async () => {
    const { s, def, ran } = await deployer();
    const stead = h.create();
    const run = await parked(stead, def, s);
    await stead.runs.deny(run.id, "approve:c1", { by: "bob", reason: "change freeze until Monday" });
    const done = await stead.runs.follow(run.id, [def], FAST_FOLLOW);
    expect(done.status).toBe("completed");
    expect(ran).toEqual([]);
    expect(s.requests).toHaveLength(2);
    expect(toolResult(s.requests[1], "c1")).toBe("denied by bob: change freeze until Monday");
    expect(transcriptProblems(s.requests[1]?.messages ?? [])).toEqual([]);
    expect((await eventsOf(stead, run.id, "approval.denied"))[0]?.data).toEqual({ wait: "approve:c1", by: "bob", reason: "change freeze until Monday" });
    expect(await journalShape(stead, run.id)).toEqual([
      ["model-1", "model", "completed"],
      ["approve:c1", "approval", "completed"],
      ["model-2", "model", "completed"],
    ]);
  });

  it("a denial cannot carry edited arguments or scope run", async () => {
    const { s, def } = await deployer();
    const stead = h.create();
    const run = await parked(stead, def, s);
    const before = await snapshot(stead, run.id);
    expect(await caught(() => stead.runs.deny(run.id, "approve:c1", { reason: "no", input: { env: "staging" } }))).toMatchObject({ code: "STEAD_BAD_OPTION" });
    expect(await caught(() => stead.runs.deny(run.id, "approve:c1", { reason: "no", scope: "run" }))).toMatchObject({ code: "STEAD_BAD_OPTION" });
    expect(await caught(() => stead.runs.approve(run.id, "approve:c1", { scope: "forever" as never }))).toMatchObject({ code: "STEAD_BAD_OPTION", message: expect.stringContaining('unknown scope "forever"') as string });
    expect(await snapshot(stead, run.id)).toEqual(before);
  });

  it("scope run: a later call of the same tool in the run does not park; scope once: it does", async () => {
    const once = await deployer({ secondCall: true });
    const stead = h.create();
    const r1 = await parked(stead, once.def, once.s);
    await stead.runs.approve(r1.id, "approve:c1", { by: "ann" });
    const second = await stead.runs.follow(r1.id, [once.def], FAST_FOLLOW);
    expect(second.status).toBe("waiting");
    expect((await stead.runs.waits(r1.id)).map((w) => [w.name, w.status])).toEqual([
      ["approve:c1", "resolved"],
      ["approve:c2", "open"],
    ]);
    expect(once.ran).toEqual([{ env: "prod" }]);

    const scoped = await deployer({ secondCall: true });
    const r2 = await parked(stead, scoped.def, scoped.s);
    await stead.runs.approve(r2.id, "approve:c1", { by: "ann", scope: "run" });
    const done = await stead.runs.follow(r2.id, [scoped.def], FAST_FOLLOW);
    expect(done.status).toBe("completed");
    expect(scoped.ran).toEqual([{ env: "prod" }, { env: "prod", note: "again" }]);
    expect((await stead.runs.waits(r2.id)).map((w) => w.name)).toEqual(["approve:c1"]);
    expect((await eventsOf(stead, r2.id, "approval.approved"))[0]?.data).toEqual({ wait: "approve:c1", by: "ann", reason: null, scope: "run" });
    expect(await journalShape(stead, r2.id)).toEqual([
      ["model-1", "model", "completed"],
      ["approve:c1", "approval", "completed"],
      ["tool:c1", "tool", "completed"],
      ["model-2", "model", "completed"],
      ["tool:c2", "tool", "completed"],
      ["model-3", "model", "completed"],
    ]);
    for (const r of scoped.s.requests) expect(transcriptProblems(r.messages)).toEqual([]);
    expect(scoped.s.requests.filter(hasToolResults)).toHaveLength(2);
  });

  it("a decision on a wait already decided: the same one stands (already), another is refused naming it, nothing written", async () => {
    const { s, def } = await deployer();
    const stead = h.create();
    const run = await parked(stead, def, s);
    await stead.runs.approve(run.id, "approve:c1", { by: "ann" });
    const before = await snapshot(stead, run.id);
    expect(await stead.runs.approve(run.id, "approve:c1", { by: "ann" })).toMatchObject({ approved: true, by: "ann", already: true });
    expect(await caught(() => stead.runs.approve(run.id, "approve:c1", { by: "ann", input: { env: "staging" } }))).toMatchObject({ code: "STEAD_INVALID_STATE", message: expect.stringMatching(/already approved by ann/) as unknown });
    expect(await caught(() => stead.runs.deny(run.id, "approve:c1", { by: "bob", reason: "late" }))).toMatchObject({ code: "STEAD_INVALID_STATE", message: expect.stringMatching(/already approved by ann/) as unknown });
    expect(await caught(() => stead.runs.approve(run.id, "approve:c9", { by: "ann" }))).toMatchObject({ code: "STEAD_WAIT_NOT_FOUND" });
    expect(await snapshot(stead, run.id)).toEqual(before);
    expect(await caught(() => stead.runs.approve("no-such-run", "approve:c1"))).toMatchObject({ code: "STEAD_RUN_NOT_FOUND" });
  });

  it("edits and scope on a plain workflow approval are refused; the wait stays open", async () => {
    const flow = workflow("shipper", async (ctx, item: string) => {
      const d = await ctx.approval("ship", { item });
      return d.approved ? `shipped ${item}` : "kept";
    });
    const stead = h.create();
    const run = await stead.run(flow, "book", FAST_FOLLOW);
    expect(run.status).toBe("waiting");
    const before = await snapshot(stead, run.id);
    const edit = await caught(() => stead.runs.approve(run.id, "ship", { input: { item: "car" } }));
    expect(edit).toMatchObject({ code: "STEAD_BAD_OPTION", message: expect.stringContaining('"ship" on run') as string });
    expect((edit as Error).message).toContain("is not a tool approval");
    expect(await caught(() => stead.runs.approve(run.id, "ship", { scope: "run" }))).toMatchObject({ code: "STEAD_BAD_OPTION" });
    expect(await snapshot(stead, run.id)).toEqual(before);
    await stead.runs.approve(run.id, "ship", { by: "ann" });
    expect((await stead.runs.follow(run.id, [flow], FAST_FOLLOW)).output).toBe("shipped book");
  });

  it("needsApproval as a function decides per call", async () => {
    const s = await server((req) => {
      const results = req.messages.filter((m) => m.role === "tool").length;
      if (results === 0) return reply.toolCalls([{ id: "small", name: "pay", args: { amount: 5 } }]);
      if (results === 1) return reply.toolCalls([{ id: "big", name: "pay", args: { amount: 5000 } }]);
      return reply.text("paid");
    });
    const paid: number[] = [];
    const payer = agent("payer", {
      model: providerModel(s.url),
      retry: FAST_RETRY,
      tools: {
        pay: tool({
          input: z.object({ amount: z.number() }),
          needsApproval: ({ amount }) => amount > 100,
          run: ({ amount }) => (paid.push(amount), "ok"),
        }),
      },
    });
    const stead = h.create();
    const run = await stead.run(payer, "pay the bills", FAST_FOLLOW);
    expect(run.status).toBe("waiting");
    expect(paid).toEqual([5]);
    expect((await stead.runs.waits(run.id)).map((w) => w.name)).toEqual(["approve:big"]);
  });
});
