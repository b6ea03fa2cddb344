import { afterEach, describe, expect, it } from "vitest";
import { SteadError, workflow } from "../src/index.js";
import { FAST_FOLLOW, steadHarness } from "./helpers/temp-store.js";
import { caught } from "./helpers/waiting.js";

const h = steadHarness();
afterEach(() => h.cleanup());

describe("group commit", () => {
  it("concurrent runs in one worker share transactions, and every run's result is right", async () => {
    const wf = workflow("batched", async (ctx, n: number) => {
      const a = await ctx.step("a", () => n + 1);
      const b = await ctx.step("b", () => a * 2);
      return ctx.step("c", () => b + n);
    });
    const stead = h.create();
    const runs = 20;
    const ids: string[] = [];
    for (let n = 0; n < runs; n++) ids.push((await stead.runs.start(wf, n)).id);
    const w = h.worker(stead, { definitions: [wf], concurrency: runs }).start();
    for (let n = 0; n < runs; n++) {
      const done = await stead.runs.waitFor(ids[n] ?? "", { timeoutMs: 15_000 });
      expect(done.status).toBe("completed");
      expect(done.output).toBe((n + 1) * 2 + n);
    }
    // Three steps and the completion: four units per run, each committed durably.
    expect(w.commitStats.units).toBe(runs * 4);
    expect(w.commitStats.transactions).toBeLessThan(w.commitStats.units);
  });
});

describe("two instances in one process", () => {
  it("on two stores do not see or touch each other's runs", async () => {
    const wf = workflow("shared-name", async (ctx, who: string) => {
      const tag = await ctx.step("tag", () => `${who}@${ctx.runId}`);
      await ctx.approval("ok");
      return `${tag}!`;
    });
    const one = h.create();
    const two = h.create();
    const [a, b] = await Promise.all([one.run(wf, "one", FAST_FOLLOW), two.run(wf, "two", FAST_FOLLOW)]);
    expect([a.status, b.status]).toEqual(["waiting", "waiting"]);
    expect((await one.runs.list()).runs.map((r) => r.id)).toEqual([a.id]);
    expect((await two.runs.list()).runs.map((r) => r.id)).toEqual([b.id]);
    expect((await caught(() => two.runs.get(a.id)) as SteadError).code).toBe("STEAD_RUN_NOT_FOUND");
    expect((await caught(() => two.runs.approve(a.id, "ok")) as SteadError).code).toBe("STEAD_RUN_NOT_FOUND");

    // The same explicit run id in both stores: two separate runs.
    const [c1, c2] = await Promise.all([one.runs.start(wf, "c-one", { id: "same-id" }), two.runs.start(wf, "c-two", { id: "same-id" })]);
    expect(c1.id).toBe(c2.id);

    h.worker(one, { definitions: [wf] }).start();
    h.worker(two, { definitions: [wf] }).start();
    await one.runs.approve(a.id, "ok");
    expect((await one.runs.waitFor(a.id, { timeoutMs: 10_000 })).output).toBe(`one@${a.id}!`);
    expect((await two.runs.get(b.id)).status).toBe("waiting");
    await one.runs.waitFor("same-id", { until: (r) => r.status === "waiting", timeoutMs: 10_000 });
    await two.runs.waitFor("same-id", { until: (r) => r.status === "waiting", timeoutMs: 10_000 });
    expect((await one.runs.journal("same-id"))[0]?.output).toBe("c-one@same-id");
    expect((await two.runs.journal("same-id"))[0]?.output).toBe("c-two@same-id");

    // Closing one instance leaves the other working.
    await one.close();
    await two.runs.approve(b.id, "ok");
    expect((await two.runs.waitFor(b.id, { timeoutMs: 10_000 })).output).toBe(`two@${b.id}!`);
    expect((await two.runs.events()).every((e) => e.runId === b.id || e.runId === "same-id")).toBe(true);
  });
});
