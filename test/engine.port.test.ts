/**
 * The engine–agent seam: a user's `ctx` holds its public members only, and nothing of it reaches
 * the engine; an agent's body gets the engine port as an argument, so calling its `fn` by hand is
 * refused rather than run half-wired.
 */
import { afterEach, describe, expect, it } from "vitest";
import { agent, scriptedModel, workflow, type AgentInput, type WorkflowContext } from "../src/index.js";
import { FAST_FOLLOW, steadHarness } from "./helpers/temp-store.js";

const h = steadHarness();
afterEach(() => h.cleanup());

/** Every member of WorkflowContext: the whole of what a user's ctx may carry. */
const PUBLIC_MEMBERS = ["agent", "approval", "child", "idempotencyKey", "now", "random", "runId", "secret", "signal", "sleep", "step"];

const echo = agent("port-echo", { model: scriptedModel({ respond: () => ({ text: "echoed" }) }) });

describe("the engine port", () => {
  it("a workflow's ctx carries its public members only: no symbol, no hidden property, a plain prototype", async () => {
    const seen: { symbols: symbol[]; names: string[]; proto: unknown; engine: unknown; fieldKeys: (string | symbol)[] }[] = [];
    const wf = workflow("port-ctx", async (ctx: WorkflowContext) => {
      const own = ctx as unknown as Record<string | symbol, unknown>;
      const fieldKeys = Reflect.ownKeys(ctx).flatMap((k) => {
        const v = Object.getOwnPropertyDescriptor(ctx, k)?.value as unknown;
        return v !== null && (typeof v === "object" || typeof v === "function") ? Reflect.ownKeys(v).filter((x) => typeof x === "symbol") : [];
      });
      seen.push({
        symbols: Object.getOwnPropertySymbols(ctx),
        names: Object.getOwnPropertyNames(ctx).sort(),
        proto: Object.getPrototypeOf(ctx),
        engine: own[Symbol.for("stead.engine")],
        fieldKeys,
      });
      return ctx.step("one", () => 1);
    });
    const stead = h.create();
    const run = await stead.run(wf, null, FAST_FOLLOW);
    expect(run.status).toBe("completed");
    expect(seen).toEqual([{ symbols: [], names: PUBLIC_MEMBERS, proto: Object.prototype, engine: undefined, fieldKeys: [] }]);
  });

  it("an agent run as a child gets its port and completes", async () => {
    const parent = workflow("port-parent", (ctx, input: AgentInput) => ctx.agent("echo", echo, input));
    const stead = h.create();
    const run = await stead.run(parent, "say it", { ...FAST_FOLLOW, definitions: [echo] });
    expect(run.status).toBe("completed");
    expect((run.output as { text: string }).text).toBe("echoed");
  });

  it("a spread copy of an agent definition keeps its body", async () => {
    const copy = { ...echo };
    const stead = h.create();
    const run = await stead.run(copy, "say it", FAST_FOLLOW);
    expect(run.status).toBe("completed");
    expect((run.output as { text: string }).text).toBe("echoed");
  });

  it("an agent's fn called by hand with a user's ctx is refused, naming the ways to run it", async () => {
    const wf = workflow("port-by-hand", (ctx, input: AgentInput) => echo.fn(ctx, input));
    const stead = h.create();
    const run = await stead.run(wf, "say it", FAST_FOLLOW);
    expect(run.status).toBe("failed");
    expect(run.error?.code).toBe("STEAD_INVALID_DEFINITION");
    expect(run.error?.message).toBe("agent port-echo runs only as a run of its own: its function cannot be called directly");
    expect(await stead.runs.events({ runId: run.id })).not.toContainEqual(expect.objectContaining({ type: "step.completed" }));
  });
});
