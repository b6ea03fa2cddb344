/**
 * A store of one's own given to createStead: the core is required and checked when Stead opens
 * it; a capability port left out is refused where it is needed, naming the port, while runs go on.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createStead, SqliteStore, workflow, type Stead } from "../src/index.js";
import { FAST_WORKER, tempStorePath } from "./helpers/temp-store.js";
import { caught } from "./helpers/waiting.js";

const flow = workflow("capabilities", { version: "1" }, async (ctx, n: number) => ctx.step("double", () => n * 2));

/** A store object with every member of a real SQLite store but `leave`. */
function storeWithout(base: SqliteStore, leave: readonly string[]): object {
  const out: Record<string, unknown> = { dialect: base.dialect, location: base.location, leaseClock: base.leaseClock };
  for (let proto: object | null = Object.getPrototypeOf(base) as object; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto) as object | null) {
    for (const k of Object.getOwnPropertyNames(proto)) {
      const v = (base as unknown as Record<string, unknown>)[k];
      if (k !== "constructor" && !(k in out) && !leave.includes(k) && typeof v === "function") out[k] = (v as (...a: unknown[]) => unknown).bind(base);
    }
  }
  return out;
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error("expected a throw");
}

describe("a store of one's own", () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  const base = () => {
    const t = tempStorePath();
    const store = new SqliteStore({ path: t.path });
    cleanups.push(t.remove);
    return store;
  };

  it("without tokens: runs complete; a token's creation is refused naming the port and what needs it, and writes nothing", async () => {
    const sqlite = base();
    const stead: Stead = createStead({ store: storeWithout(sqlite, ["createToken", "listTokens", "revokeToken", "findTokenByHash", "touchToken"]) as SqliteStore });
    cleanups.push(() => stead.close());
    const w = stead.worker({ definitions: [flow], ...FAST_WORKER });
    w.start();
    cleanups.push(() => w.stop({ graceMs: 200 }));
    const { id } = await stead.runs.start(flow, 21);
    expect((await stead.runs.waitFor(id, { timeoutMs: 20_000 })).output).toBe(42);
    const e = await caught(() => stead.tokens.create({ name: "ops", role: "operator" }));
    expect(e).toMatchObject({ code: "STEAD_STORE_CAPABILITY_MISSING" });
    expect(String((e as Error).message)).toMatch(/does not implement tokens \(createToken, listTokens, revokeToken, findTokenByHash, touchToken\), which access tokens/);
    expect(await sqlite.listTokens()).toEqual([]);
  });

  it("without a core member: refused when Stead opens it, naming the member", () => {
    const sqlite = base();
    cleanups.push(() => sqlite.close());
    const e = thrown(() => createStead({ store: storeWithout(sqlite, ["claim"]) as SqliteStore }));
    expect(e).toMatchObject({ code: "STEAD_STORE_INCOMPLETE" });
    expect((e as Error).message).toMatch(/lacks claim: every store needs the core/);
  });

  it("with part of a port: refused when Stead opens it, naming what is missing and the port", () => {
    const sqlite = base();
    cleanups.push(() => sqlite.close());
    const e = thrown(() => createStead({ store: storeWithout(sqlite, ["touchToken"]) as SqliteStore }));
    expect(e).toMatchObject({ code: "STEAD_STORE_INCOMPLETE" });
    expect((e as Error).message).toMatch(/lacks touchToken: .*belong to tokens/);
  });
});
