/**
 * Decisions' fields beyond by and reason are read by the rules an instance is made with: the
 * agent layer's tool approvals through createStead(). A field no rules read is refused, never
 * dropped (a dropped edit would approve the call the person meant to change).
 */
import { afterEach, describe, expect, it } from "vitest";
import { Stead, workflow, type ApprovalDecision } from "../src/index.js";
import { FAST_FOLLOW, steadHarness } from "./helpers/temp-store.js";
import { caught } from "./helpers/waiting.js";

const h = steadHarness();
afterEach(() => h.cleanup());

const gated = workflow("decision-gated", (ctx) => ctx.approval("ship", { what: "v2" }));

describe("new Stead()", () => {
  it("still works for one release, and says once, as a deprecation warning, to use createStead; createStead says nothing", async () => {
    const warnings: { name: string; code?: string; message: string }[] = [];
    const listener = (w: Error & { code?: string }) => warnings.push({ name: w.name, code: w.code, message: w.message });
    process.on("warning", listener);
    try {
      const made = h.create();
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.code === "STEAD_DEP_NEW_STEAD")).toEqual([]);
      const a = new Stead({ store: made.store });
      const b = new Stead({ store: made.store });
      expect(a).toBeInstanceOf(Stead);
      expect(b).toBeInstanceOf(Stead);
      await new Promise((r) => setImmediate(r));
      const ours = warnings.filter((w) => w.code === "STEAD_DEP_NEW_STEAD");
      expect(ours.map((w) => w.name)).toEqual(["DeprecationWarning"]);
      expect(ours[0]?.message).toMatch(/^new Stead\(\) is deprecated .*use createStead\(options\)/);
    } finally {
      process.off("warning", listener);
    }
  });
});

describe("decision rules", () => {
  it("an instance made without the agent's rules refuses edited arguments instead of dropping them; the wait stays open", async () => {
    const stead = h.create();
    const run = await stead.run(gated, null, FAST_FOLLOW);
    expect(run.status).toBe("waiting");
    const bare = new Stead({ store: stead.store });
    const e = await caught(() => bare.runs.approve(run.id, "ship", { input: { what: "v3" } }));
    expect(e).toMatchObject({ code: "STEAD_BAD_OPTION", message: `a decision on "ship" (run ${run.id}) cannot carry "input": this instance reads no fields beyond by and reason` });
    expect((await stead.runs.waits(run.id)).map((w) => w.status)).toEqual(["open"]);
    const ok = await bare.runs.approve(run.id, "ship", { by: "ann", reason: "fine" });
    expect(ok).toMatchObject({ approved: true, by: "ann", already: false });
    const done = await stead.runs.follow(run.id, [gated], FAST_FOLLOW);
    expect(done.status).toBe("completed");
    expect(done.output).toMatchObject({ approved: true, by: "ann", reason: "fine" } satisfies Partial<ApprovalDecision>);
  });

  it("createStead's instance refuses a field no rules read, and edited arguments on an approval that is not a tool's", async () => {
    const stead = h.create();
    const run = await stead.run(gated, null, FAST_FOLLOW);
    const unknownField = { colour: "red" } as unknown as { by?: string };
    expect(await caught(() => stead.runs.approve(run.id, "ship", unknownField))).toMatchObject({
      code: "STEAD_BAD_OPTION",
      message: `a decision on "ship" (run ${run.id}) cannot carry "colour": this instance reads "input", "scope" beyond by and reason`,
    });
    expect(await caught(() => stead.runs.approve(run.id, "ship", { input: { what: "v3" } }))).toMatchObject({
      code: "STEAD_BAD_OPTION",
      message: `"ship" on run ${run.id} is not a tool approval: edited arguments and scope apply only to an agent's tool calls`,
    });
    expect((await stead.runs.waits(run.id)).map((w) => w.status)).toEqual(["open"]);
  });
});
