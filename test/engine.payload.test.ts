import { afterEach, describe, expect, it } from "vitest";
import { SteadError, StepFailedError, workflow } from "../src/index.js";
import { FAST_FOLLOW, steadHarness } from "./helpers/temp-store.js";
import { caught } from "./helpers/waiting.js";

const h = steadHarness();
afterEach(() => h.cleanup());

const LIMIT = 1_000;

function failure(e: unknown) {
  return e instanceof StepFailedError ? { code: e.originalCode, message: e.message, step: e.stepId } : { code: "not a StepFailedError", message: String(e), step: undefined };
}

describe("payloads", () => {
  it("fails closed on a step result over the payload ceiling, naming the step", async () => {
    const wf = workflow("big-step", async (ctx) => {
      await ctx.step("small", () => "x".repeat(LIMIT / 2));
      try {
        await ctx.step("huge", () => "x".repeat(LIMIT * 2));
        return { caught: null };
      } catch (e) {
        return { caught: failure(e) };
      }
    });
    const stead = h.create({ payloadLimitBytes: LIMIT });
    const r = await stead.run(wf, null, FAST_FOLLOW);
    expect(r.status).toBe("completed");
    const c = (r.output as { caught: ReturnType<typeof failure> }).caught;
    expect(c.code).toBe("STEAD_PAYLOAD_TOO_LARGE");
    expect(c.step).toBe("huge");
    expect(c.message).toContain('step "huge"');
    const journal = await stead.runs.journal(r.id);
    expect(journal.map((s) => [s.id, s.status])).toEqual([
      ["small", "completed"],
      ["huge", "failed"],
    ]);
    expect(journal[1]?.output).toBeUndefined();
    expect(journal[1]?.error?.code).toBe("STEAD_PAYLOAD_TOO_LARGE");
  });

  it("fails a run whose own output is over the ceiling, and refuses an input over it at start", async () => {
    const wf = workflow("big-output", async (ctx) => {
      const n = await ctx.step("n", () => LIMIT * 2);
      return "y".repeat(n);
    });
    const stead = h.create({ payloadLimitBytes: LIMIT });
    const r = await stead.run(wf, null, FAST_FOLLOW);
    expect(r.status).toBe("failed");
    expect(r.error?.code).toBe("STEAD_PAYLOAD_TOO_LARGE");
    expect(r.error?.message).toContain(r.id);
    expect(r.output).toBeUndefined();

    const before = (await stead.runs.list()).runs;
    const e = await caught(() => stead.runs.start(wf, "z".repeat(LIMIT * 2) as unknown as null));
    expect(e).toBeInstanceOf(SteadError);
    expect((e as SteadError).code).toBe("STEAD_PAYLOAD_TOO_LARGE");
    expect((await stead.runs.list()).runs).toEqual(before);
  });

  it("refuses a signal payload over the ceiling, leaving the run waiting for it", async () => {
    const wf = workflow("big-signal", async (ctx) => ctx.signal("data"));
    const stead = h.create({ payloadLimitBytes: LIMIT });
    const parked = await stead.run(wf, null, FAST_FOLLOW);
    const before = { events: await stead.runs.events({ runId: parked.id }), waits: await stead.runs.waits(parked.id) };
    const e = await caught(() => stead.runs.signal(parked.id, "data", "s".repeat(LIMIT * 2)));
    expect((e as SteadError).code).toBe("STEAD_PAYLOAD_TOO_LARGE");
    expect((e as SteadError).message).toContain('signal "data"');
    expect({ events: await stead.runs.events({ runId: parked.id }), waits: await stead.runs.waits(parked.id) }).toEqual(before);
    expect((await stead.runs.get(parked.id)).status).toBe("waiting");
  });

  it("fails closed on values JSON cannot carry (Date, Map, BigInt, circular, function), naming the step", async () => {
    const circular = (): unknown => {
      const o: Record<string, unknown> = { a: 1 };
      o.self = o;
      return o;
    };
    const bad: [string, () => unknown][] = [
      ["date", () => new Date(0)],
      ["map", () => new Map([["k", 1]])],
      ["bigint", () => 10n],
      ["circular", circular],
      ["function", () => () => 1],
      ["nested-date", () => ({ list: [1, { when: new Date(0) }] })],
    ];
    const wf = workflow("unserializable", async (ctx) => {
      const out: Record<string, ReturnType<typeof failure> | "accepted"> = {};
      for (const [name, make] of bad) {
        try {
          await ctx.step(`bad-${name}`, make);
          out[name] = "accepted";
        } catch (e) {
          out[name] = failure(e);
        }
      }
      return out;
    });
    const stead = h.create();
    const r = await stead.run(wf, null, FAST_FOLLOW);
    expect(r.status).toBe("completed");
    const out = r.output as Record<string, ReturnType<typeof failure>>;
    for (const [name] of bad) {
      expect(out[name]?.code, name).toBe("STEAD_NOT_SERIALIZABLE");
      expect(out[name]?.message, name).toContain(`step "bad-${name}"`);
    }
    expect(out["nested-date"]?.message).toContain("$.list[1].when");
    expect((await stead.runs.journal(r.id)).every((s) => s.status === "failed" && s.error?.code === "STEAD_NOT_SERIALIZABLE")).toBe(true);
  });

  it("gives the first execution exactly the values replay will see (undefined round-trips)", async () => {
    const seen: unknown[] = [];
    const wf = workflow("round-trip", async (ctx) => {
      const nothing = await ctx.step("nothing", () => undefined);
      const sparse = await ctx.step("sparse", () => ({ keep: 1, drop: undefined, list: [1, undefined, 3] }));
      seen.push({ nothingIsUndefined: nothing === undefined, sparse });
      await ctx.approval("ok");
      return undefined;
    });
    const stead = h.create();
    const parked = await stead.run(wf, null, FAST_FOLLOW);
    expect(parked.status).toBe("waiting");
    await stead.runs.approve(parked.id, "ok");
    const done = await stead.runs.follow(parked.id, [wf], FAST_FOLLOW);
    expect(done.status).toBe("completed");
    expect(done.output).toBeUndefined();
    expect(seen).toHaveLength(2);
    expect(seen[0]).toStrictEqual({ nothingIsUndefined: true, sparse: { keep: 1, list: [1, null, 3] } });
    expect(seen[1]).toStrictEqual(seen[0]);
  });
});
