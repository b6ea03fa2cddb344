/**
 * A decision binds to the call it was made for (its fingerprint: tool and arguments). A decision
 * that arrives carrying another call's fingerprint does not run this call: the run asks again.
 */
import { expect, it } from "vitest";
import { z } from "zod";
import { agent, tool } from "../src/index.js";
import { callFingerprint } from "../src/agent/approvals.js";
import { resolveWaitUnit } from "../src/engine/runs/waits.js";
import { FAST_FOLLOW } from "./helpers/temp-store.js";
import { providerModel, reply, type RecordedRequest } from "./helpers/provider-server.js";
import { FAST_RETRY, agentTestKit } from "./fixtures/agents/kit.js";

const { h, server } = agentTestKit();

it("a decision made for another call is not applied: approval.stale, and the call waits for its own decision", async () => {
  const s = await server((req: RecordedRequest) =>
    req.messages.some((m) => m.role === "tool") ? reply.text("done") : reply.toolCalls([{ id: "c1", name: "pay", args: { cents: 500 } }]),
  );
  const paid: number[] = [];
  const def = agent("payer", {
    model: providerModel(s.url),
    retry: FAST_RETRY,
    tools: { pay: tool({ input: z.object({ cents: z.number() }), needsApproval: true, run: ({ cents }) => paid.push(cents) }) },
  });
  const stead = h.create();
  const run = await stead.run(def, "pay the invoice", FAST_FOLLOW);
  expect(run.status).toBe("waiting");

  // A decision recorded for a different call (another amount): as a stale API client might send it.
  const other = callFingerprint("pay", { cents: 50_000 });
  expect(other).not.toBe(callFingerprint("pay", { cents: 500 }));
  const wait = (await stead.store.waits(run.id)).find((w) => w.name === "approve:c1");
  if (!wait) throw new Error("no approve:c1 wait");
  const [r] = await stead.store.commit([
    resolveWaitUnit(run.id, wait, JSON.stringify({ approved: true, by: "mallory", reason: null, at: Date.now(), fingerprint: other }), "mallory", {
      type: "approval.approved",
      data: { wait: "approve:c1" },
    }),
  ]);
  expect(r?.ok).toBe(true);

  const after = await stead.runs.follow(run.id, [def], FAST_FOLLOW);
  expect(after.status).toBe("waiting");
  expect(paid).toEqual([]);
  const open = (await stead.runs.waits(run.id)).filter((w) => w.status === "open");
  expect(open.map((w) => w.name)).toEqual(["approve:c1.2"]);
  const stale = (await stead.runs.events({ runId: run.id })).filter((e) => e.type === "approval.stale");
  expect(stale).toHaveLength(1);

  // Its own decision runs it.
  await stead.runs.approve(run.id, "approve:c1.2", { by: "alice" });
  const done = await stead.runs.follow(run.id, [def], FAST_FOLLOW);
  expect(done.status).toBe("completed");
  expect(paid).toEqual([500]);
});
