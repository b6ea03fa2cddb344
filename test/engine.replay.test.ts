import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { workflow } from "../src/index.js";
import { FAST_FOLLOW, steadHarness } from "./helpers/temp-store.js";
import { deferred, waitUntil } from "./helpers/waiting.js";

const h = steadHarness();
afterEach(() => h.cleanup());

describe("replay", () => {
  it("never executes a completed step again across a park and resume", async () => {
    const counts = { a: 0, b: 0, c: 0 };
    const wf = workflow("replay-count", async (ctx, input: { n: number }) => {
      const a = await ctx.step("a", () => ++counts.a && input.n + 1);
      const b = await ctx.step("b", () => ++counts.b && a * 2);
      const decision = await ctx.approval("ok", { a, b });
      const c = await ctx.step("c", () => ++counts.c && b + 1);
      return { a, b, c, approved: decision.approved };
    });
    const stead = h.create();
    const parked = await stead.run(wf, { n: 1 }, FAST_FOLLOW);
    expect(parked.status).toBe("waiting");
    expect(counts).toEqual({ a: 1, b: 1, c: 0 });

    await stead.runs.approve(parked.id, "ok", { by: "ann" });
    const done = await stead.runs.follow(parked.id, [wf], FAST_FOLLOW);
    expect(done.status).toBe("completed");
    expect(done.output).toEqual({ a: 2, b: 4, c: 5, approved: true });
    expect(counts).toEqual({ a: 1, b: 1, c: 1 });
    expect((await stead.runs.journal(parked.id)).map((s) => [s.id, s.status])).toEqual([
      ["a", "completed"],
      ["b", "completed"],
      ["ok", "completed"],
      ["c", "completed"],
    ]);
  });

  it("never executes a failed step again: replay throws its recorded error", async () => {
    let calls = 0;
    const wf = workflow("replay-failed", async (ctx) => {
      let message = "";
      try {
        await ctx.step("flaky", () => {
          calls++;
          throw new Error(`failure number ${calls}`);
        });
      } catch (e) {
        message = (e as Error).message;
      }
      await ctx.approval("ok");
      return message;
    });
    const stead = h.create();
    const parked = await stead.run(wf, null, FAST_FOLLOW);
    await stead.runs.approve(parked.id, "ok");
    const done = await stead.runs.follow(parked.id, [wf], FAST_FOLLOW);
    expect(done.output).toBe("failure number 1");
    expect(calls).toBe(1);
  });

  it("re-executes only the interrupted step when a worker dies mid-run", async () => {
    const counts = { a: 0, b: 0, c: 0 };
    const hang = deferred();
    const wf = workflow("replay-crash", async (ctx) => {
      const a = await ctx.step("a", () => ++counts.a);
      const b = await ctx.step("b", async () => {
        if (++counts.b === 1) await hang.promise;
        return "b-done";
      });
      const c = await ctx.step("c", () => ++counts.c);
      return { a, b, c };
    });
    const stead = h.create();
    const { id } = await stead.runs.start(wf, null);
    const first = h.worker(stead, { definitions: [wf], leaseMs: 300 }).start();
    await waitUntil("step b to start", () => counts.b === 1);
    first.abortAll();
    h.worker(stead, { definitions: [wf], leaseMs: 300 }).start();
    const done = await stead.runs.waitFor(id, { timeoutMs: 15_000 });
    expect(done.status).toBe("completed");
    expect(done.output).toEqual({ a: 1, b: "b-done", c: 1 });
    expect(counts).toEqual({ a: 1, b: 2, c: 1 });
    expect(done.fence).toBe(2);
  });

  it("fails a run that uses one step id twice, naming the first's place in the run and the second's call site", async () => {
    const wf = workflow("dup-step", async (ctx) => {
      await ctx.step("same", () => 1);
      await ctx.step("same", () => 2);
      return "unreachable";
    });
    const stead = h.create();
    const r = await stead.run(wf, null, FAST_FOLLOW);
    expect(r.status).toBe("failed");
    expect(r.error?.code).toBe("STEAD_DUPLICATE_STEP_ID");
    const message = r.error?.message ?? "";
    expect(message).toContain('"same"');
    expect(message).toContain("first at journal position 0");
    const lines = [...message.matchAll(/engine\.replay\.test\.ts:(\d+)/g)].map((m) => Number(m[1]));
    expect(lines).toHaveLength(1);
    const source = readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n");
    expect(source[(lines[0] ?? 0) - 1]).toContain('ctx.step("same", () => 2)');
  });

  it("holds a run nondeterminism when replay asks for a different step, and retry with the fixed code completes it", async () => {
    let strayCalls = 0;
    const v1 = workflow("nondet", { version: "same" }, async (ctx) => {
      const a = await ctx.step("a", () => "A");
      await ctx.approval("ok");
      return ctx.step("b", () => `${a}B`);
    });
    const changed = workflow("nondet", { version: "same" }, async (ctx) => {
      const x = await ctx.step("x", () => ++strayCalls && "X");
      await ctx.approval("ok");
      return ctx.step("b", () => `${x}B`);
    });
    expect(changed.fingerprint()).toBe(v1.fingerprint());
    const stead = h.create();
    const parked = await stead.run(v1, null, FAST_FOLLOW);
    await stead.runs.approve(parked.id, "ok");
    const journalBefore = await stead.runs.journal(parked.id);

    const held = await stead.runs.follow(parked.id, [changed], FAST_FOLLOW);
    expect(held.status).toBe("held");
    expect(strayCalls).toBe(0);
    const holds = await stead.holds.list({ runId: parked.id });
    expect(holds).toHaveLength(1);
    expect(holds[0]?.kind).toBe("nondeterminism");
    expect(holds[0]?.details).toMatchObject({ position: 0, expected: "a", requested: "x" });
    expect(holds[0]?.reason).toContain('"a"');
    expect(holds[0]?.reason).toContain('"x"');
    expect(await stead.runs.journal(parked.id)).toEqual(journalBefore);

    await stead.runs.release(parked.id, "nondeterminism", { choice: "retry", by: "ann" });
    const done = await stead.runs.follow(parked.id, [v1], FAST_FOLLOW);
    expect(done.status).toBe("completed");
    expect(done.output).toBe("AB");
    expect((await stead.holds.list({ runId: parked.id, open: false }))[0]).toMatchObject({ status: "released", choice: "retry", releasedBy: "ann" });
  });

  it("holds a run nondeterminism when the code ends before the journal does", async () => {
    const v1 = workflow("nondet-short", { version: "same" }, async (ctx) => {
      await ctx.step("a", () => 1);
      await ctx.step("b", () => 2);
      await ctx.approval("ok");
      return "long";
    });
    const shorter = workflow("nondet-short", { version: "same" }, async (ctx) => {
      await ctx.step("a", () => 1);
      return "short";
    });
    const stead = h.create();
    const parked = await stead.run(v1, null, FAST_FOLLOW);
    await stead.runs.approve(parked.id, "ok");
    const held = await stead.runs.follow(parked.id, [shorter], FAST_FOLLOW);
    expect(held.status).toBe("held");
    expect(held.output).toBeUndefined();
    const [hold] = await stead.holds.list({ runId: parked.id });
    expect(hold?.kind).toBe("nondeterminism");
  });

  describe("definition_changed", () => {
    const counts = { a: 0 };
    const original = workflow("changing", { version: "1" }, async (ctx) => {
      const a = await ctx.step("a", () => ++counts.a && 1);
      await ctx.approval("ok");
      return ctx.step("b", () => a + 10);
    });
    const changed = workflow("changing", { version: "2" }, async (ctx) => {
      const a = await ctx.step("a", () => ++counts.a && 100);
      await ctx.approval("ok");
      return ctx.step("b", () => a + 20);
    });

    it("holds a run whose definition changed, with three ways out: accept-change, revert, fork", async () => {
      counts.a = 0;
      const stead = h.create();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const parked = await stead.run(original, null, FAST_FOLLOW);
        expect(parked.status).toBe("waiting");
        await stead.runs.approve(parked.id, "ok");
        ids.push(parked.id);
      }
      expect(counts.a).toBe(3);
      for (const id of ids) {
        const held = await stead.runs.follow(id, [changed], FAST_FOLLOW);
        expect(held.status).toBe("held");
        const [hold] = await stead.holds.list({ runId: id });
        expect(hold?.kind).toBe("definition_changed");
        expect(hold?.details).toMatchObject({ recorded: original.fingerprint(), current: changed.fingerprint() });
      }
      const [accept, revert, forked] = ids as [string, string, string];

      await stead.runs.resume(accept, { acceptChange: true });
      const accepted = await stead.runs.follow(accept, [changed], FAST_FOLLOW);
      expect(accepted.status).toBe("completed");
      expect(accepted.output).toBe(21);
      expect(accepted.fingerprint).toBe(changed.fingerprint());

      await stead.runs.release(revert, "definition_changed", { choice: "retry" });
      const reverted = await stead.runs.follow(revert, [original], FAST_FOLLOW);
      expect(reverted.status).toBe("completed");
      expect(reverted.output).toBe(11);

      const fork = await stead.runs.fork(forked);
      expect(fork.reused).toBe(2);
      const forkDone = await stead.runs.follow(fork.id, [changed], FAST_FOLLOW);
      expect(forkDone.status).toBe("completed");
      expect(forkDone.output).toBe(21);
      expect((await stead.runs.get(forked)).status).toBe("held");

      expect(counts.a).toBe(3);
    });
  });

  it("replays ctx.now() and ctx.random() with the values the first execution saw", async () => {
    const seen: { t: number; r: number }[] = [];
    const wf = workflow("clock", async (ctx) => {
      const t = ctx.now();
      const r = ctx.random();
      seen.push({ t, r });
      await ctx.approval("ok");
      return { t, r, later: ctx.now() };
    });
    const stead = h.create();
    const parked = await stead.run(wf, null, FAST_FOLLOW);
    const first = seen[0];
    if (!first) throw new Error("the workflow did not run");
    await waitUntil("the clock to move on", () => Date.now() > first.t + 2);
    await stead.runs.approve(parked.id, "ok");
    const done = await stead.runs.follow(parked.id, [wf], FAST_FOLLOW);
    expect(seen).toHaveLength(2);
    expect(seen[1]).toEqual(first);
    const out = done.output as { t: number; r: number; later: number };
    expect({ t: out.t, r: out.r }).toEqual(first);
    expect(out.later).toBeGreaterThan(first.t);
    expect((await stead.runs.journal(parked.id)).map((s) => s.kind)).toEqual(["now", "random", "approval", "now"]);
  });
});
