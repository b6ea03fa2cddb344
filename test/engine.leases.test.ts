import { afterEach, describe, expect, it } from "vitest";
import { workflow } from "../src/index.js";
import { steadHarness } from "./helpers/temp-store.js";
import { deferred, waitUntil } from "./helpers/waiting.js";

const h = steadHarness();
afterEach(() => h.cleanup());

describe("crash loops", () => {
  it("holds a run process_failed after three lost claims in a row; release retry resets the count", async () => {
    const gate = deferred();
    let calls = 0;
    const wf = workflow("crash-loop", async (ctx) => {
      const v = await ctx.step("work", async () => {
        calls++;
        await gate.promise;
        return "worked";
      });
      return `${v}, finished`;
    });
    const stead = h.create();
    const { id } = await stead.runs.start(wf, null);

    // Three workers each claim the run and die before any step completes.
    for (let i = 1; i <= 3; i++) {
      const w = h.worker(stead, { definitions: [wf], leaseMs: 200 }).start();
      await waitUntil(`claim ${i} to start the step`, () => calls === i);
      w.abortAll();
    }
    h.worker(stead, { definitions: [wf], leaseMs: 200 }).start();
    const held = await stead.runs.waitFor(id, { until: (r) => r.status === "held", timeoutMs: 15_000 });
    expect(held.lostClaims).toBe(3);
    expect(calls).toBe(3);
    const [hold] = await stead.holds.list({ runId: id });
    expect(hold?.kind).toBe("process_failed");
    expect(hold?.details).toMatchObject({ lostClaims: 3 });
    const claims = (await stead.runs.events({ runId: id })).filter((e) => e.type === "run.claimed");
    expect(claims.map((e) => e.data.previousStatus)).toEqual(["pending", "running", "running", "running"]);

    // The dead claims' steps now finish: their writes carry stale fences and must be refused.
    gate.resolve();
    await stead.runs.release(id, "process_failed", { choice: "retry" });
    const done = await stead.runs.waitFor(id, { timeoutMs: 15_000 });
    expect(done.status).toBe("completed");
    expect(done.output).toBe("worked, finished");
    expect(done.lostClaims).toBe(0);
    expect(done.fence).toBe(5);
    const steps = await stead.runs.journal(id);
    expect(steps.map((s) => [s.id, s.status])).toEqual([["work", "completed"]]);
    expect((await stead.runs.events({ runId: id })).filter((e) => e.type === "step.completed")).toHaveLength(1);
  });

  it("a completed step resets the lost-claim count: lost claims with progress between them are no crash loop", async () => {
    const calls = [0, 0, 0, 0, 0];
    let hangs = 0;
    const never = new Promise<never>(() => undefined);
    const wf = workflow("progress", async (ctx) => {
      for (let i = 0; i < calls.length; i++) {
        await ctx.step(`s${i}`, async () => {
          calls[i] = (calls[i] ?? 0) + 1;
          // Each step after the first hangs on its first attempt: every claim completes one step, then dies.
          if (i > 0 && calls[i] === 1) {
            hangs++;
            await never;
          }
          return i;
        });
      }
      return "done";
    });
    const stead = h.create();
    const { id } = await stead.runs.start(wf, null);
    for (let i = 1; i < calls.length; i++) {
      const w = h.worker(stead, { definitions: [wf], leaseMs: 200 }).start();
      await waitUntil(`claim ${i} to hang`, () => hangs === i);
      w.abortAll();
    }
    h.worker(stead, { definitions: [wf], leaseMs: 200 }).start();
    const done = await stead.runs.waitFor(id, { timeoutMs: 15_000 });
    expect(done.status).toBe("completed");
    expect(done.lostClaims).toBe(0);
    expect(await stead.holds.list({ runId: id, open: false })).toEqual([]);
    const claims = (await stead.runs.events({ runId: id })).filter((e) => e.type === "run.claimed");
    expect(claims.map((e) => e.data.previousStatus)).toEqual(["pending", "running", "running", "running", "running"]);
    expect(calls).toEqual([1, 2, 2, 2, 2]);
  });
});
