import { afterEach, describe, expect, it } from "vitest";
import { SteadError, workflow } from "../src/index.js";
import { FAST_FOLLOW, steadHarness } from "./helpers/temp-store.js";
import { caught, waitUntil } from "./helpers/waiting.js";

const h = steadHarness();
afterEach(() => h.cleanup());

describe("child runs", () => {
  it("ctx.child returns the child's output; a failing child makes ctx.child throw STEAD_CHILD_FAILED", async () => {
    let kidRuns = 0;
    const kid = workflow("kid", async (ctx, input: { n: number }) => ctx.step("double", () => ++kidRuns && input.n * 2));
    const failing = workflow("kid-fails", async (ctx) => {
      await ctx.step("boom", () => {
        throw new Error("kaboom");
      });
    });
    const parent = workflow("parent", async (ctx, input: { n: number }) => {
      const doubled = await ctx.child("kid-1", kid, { n: input.n });
      try {
        await ctx.child("kid-2", failing, null);
        return { doubled, failure: null };
      } catch (e) {
        const err = e as SteadError;
        return { doubled, failure: { isSteadError: e instanceof SteadError, code: err.code, message: err.message } };
      }
    });
    const stead = h.create();
    const r = await stead.run(parent, { n: 21 }, { ...FAST_FOLLOW, definitions: [kid, failing] });
    expect(r.status).toBe("completed");
    const out = r.output as { doubled: number; failure: { isSteadError: boolean; code: string; message: string } };
    expect(out.doubled).toBe(42);
    expect(out.failure).toMatchObject({ isSteadError: true, code: "STEAD_CHILD_FAILED" });
    expect(out.failure.message).toContain("kaboom");
    // The parent replayed after each child ended; that started no second child and re-ran nothing.
    expect(kidRuns).toBe(1);
    const children = (await stead.runs.list()).runs;
    const byParent = children.filter((c) => c.parentId === r.id);
    expect(byParent.map((c) => [c.definition, c.status]).sort()).toEqual([
      ["kid", "completed"],
      ["kid-fails", "failed"],
    ]);
  });

  it("cancelling a parent cancels its waiting and pending descendants and their open waits, in events", async () => {
    const leaf = workflow("leaf", async (ctx) => ctx.step("x", () => 1));
    const middle = workflow("middle", async (ctx) => ctx.child("leaf", leaf, null));
    const asker = workflow("asker", async (ctx) => ctx.approval("may-i"));
    const root = workflow("root", async (ctx) => {
      await ctx.child("asker", asker, null);
      return ctx.child("middle", middle, null);
    });
    const stead = h.create();
    const { id: root1 } = await stead.runs.start(root, null);
    // No worker has `leaf`: the leaf stays pending under a waiting middle.
    h.worker(stead, { definitions: [root, middle, asker] }).start();
    const askerId = await waitUntil("the asker to wait for approval", async () => {
      const kid = (await stead.runs.list()).runs.find((r) => r.definition === "asker" && r.status === "waiting");
      return kid?.id;
    });
    await stead.runs.approve(askerId, "may-i");
    const [middleId, leafId] = await waitUntil("middle waiting on a pending leaf", async () => {
      const all = (await stead.runs.list()).runs;
      const m = all.find((r) => r.definition === "middle" && r.status === "waiting");
      const l = all.find((r) => r.definition === "leaf" && r.status === "pending");
      return m && l ? [m.id, l.id] : undefined;
    });
    await stead.runs.waitFor(root1, { until: (r) => r.status === "waiting" });

    const cancelled = await stead.runs.cancel(root1, { reason: "no longer needed", by: "ann" });
    expect([...cancelled.cancelled].sort()).toEqual([root1, middleId, leafId].sort());
    for (const id of [root1, middleId, leafId]) {
      const run = await stead.runs.get(id);
      expect(run.status).toBe("cancelled");
      expect(run.error?.code).toBe("STEAD_CANCELLED");
      expect(run.error?.message).toContain("no longer needed");
      expect((await stead.runs.waits(id)).filter((w) => w.status === "open")).toEqual([]);
      const ev = (await stead.runs.events({ runId: id })).filter((e) => e.type === "run.cancelled");
      expect(ev).toHaveLength(1);
      expect(ev[0]?.data).toMatchObject({ reason: "no longer needed", by: "ann", ...(id === root1 ? {} : { via: root1 }) });
    }
    expect((await stead.runs.waits(middleId)).find((w) => w.name === "leaf")?.status).toBe("cancelled");
    expect((await stead.runs.waits(root1)).find((w) => w.name === "middle")?.status).toBe("cancelled");
    // The finished child is left as it was.
    expect((await stead.runs.get(askerId)).status).toBe("completed");
  });

  it("cancelling a child waiting for approval cancels that wait; approving it afterwards is refused", async () => {
    const asker = workflow("asker", async (ctx) => ctx.approval("may-i"));
    const root = workflow("root", async (ctx) => ctx.child("asker", asker, null));
    const stead = h.create();
    const { id } = await stead.runs.start(root, null);
    h.worker(stead, { definitions: [root, asker] }).start();
    const askerId = await waitUntil("the child to wait", async () => (await stead.runs.list()).runs.find((r) => r.definition === "asker" && r.status === "waiting")?.id);
    await stead.runs.waitFor(id, { until: (r) => r.status === "waiting" });
    await stead.runs.cancel(id);
    const [w] = await stead.runs.waits(askerId);
    expect(w).toMatchObject({ name: "may-i", status: "cancelled" });
    const e = await caught(() => stead.runs.approve(askerId, "may-i"));
    expect((e as SteadError).code).toBe("STEAD_WAIT_NOT_FOUND");
  });

  it("cancelling a child wakes its parent, whose ctx.child throws STEAD_CHILD_FAILED", async () => {
    const asker = workflow("asker", async (ctx) => ctx.approval("may-i"));
    const root = workflow("root", async (ctx) => {
      try {
        return await ctx.child("asker", asker, null);
      } catch (e) {
        return { code: (e as SteadError).code, message: (e as SteadError).message };
      }
    });
    const stead = h.create();
    const { id } = await stead.runs.start(root, null);
    h.worker(stead, { definitions: [root, asker] }).start();
    const askerId = await waitUntil("the child to wait", async () => (await stead.runs.list()).runs.find((r) => r.definition === "asker" && r.status === "waiting")?.id);
    await stead.runs.waitFor(id, { until: (r) => r.status === "waiting" });
    expect(await stead.runs.cancel(askerId, { reason: "wrong question" })).toMatchObject({ cancelled: [askerId] });
    const done = await stead.runs.waitFor(id, { timeoutMs: 10_000 });
    expect(done.status).toBe("completed");
    expect(done.output).toMatchObject({ code: "STEAD_CHILD_FAILED" });
    expect((done.output as { message: string }).message).toContain("cancelled");
  });
});
