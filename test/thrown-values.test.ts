/**
 * Whatever a step throws (an object whose toString, toJSON or getters throw, a Symbol, a BigInt, a
 * cyclic object, a Proxy that throws on every trap, an Error whose message getter throws), the
 * journal holds that step as failed, with a description of the value and the fields that could be
 * read, bounded in size; the run fails with it. Describing a thrown value never throws.
 */
import { afterEach, describe, expect, it } from "vitest";
import { encodeError, errorRecord } from "../src/engine/payload.js";
import { errorMessage } from "../src/errors.js";
import { workflow } from "../src/index.js";
import { onStore, STORE_KINDS, type OnStore } from "./helpers/both-stores.js";

const trap = () => {
  throw new Error("trap");
};
const hostile = (): object =>
  new Proxy(
    {},
    { get: trap, has: trap, ownKeys: trap, getOwnPropertyDescriptor: trap, getPrototypeOf: trap, set: trap, defineProperty: trap, apply: trap, construct: trap, deleteProperty: trap, isExtensible: trap, preventExtensions: trap, setPrototypeOf: trap },
  );

class MessageThrows extends Error {
  status = 503;
  override get message(): string {
    throw new Error("message getter");
  }
  override get name(): string {
    throw new Error("name getter");
  }
}

interface Case {
  /** What the step throws (made fresh for each run). */
  make: () => unknown;
  /** A part of the journaled message. */
  message: string | RegExp;
  /** The journaled fields, or undefined for none. */
  fields?: Record<string, unknown>;
}

const CASES: Record<string, Case> = {
  "toString throws": {
    make: () => ({ code: 42, detail: "disk full", toString: () => trap() }),
    message: '{"code":42,"detail":"disk full"}',
    fields: { code: 42, detail: "disk full" },
  },
  "toJSON throws": {
    make: () => ({ reason: "quota", toJSON: () => trap() }),
    message: '{"reason":"quota"}',
    fields: { reason: "quota" },
  },
  "a getter throws": {
    make: () => ({
      kept: "yes",
      get broken(): string {
        throw new Error("getter");
      },
    }),
    message: '"kept":"yes"',
    fields: { kept: "yes", broken: "[unreadable: Error: getter]" },
  },
  "a Symbol": { make: () => Symbol("boom"), message: "Symbol(boom)" },
  "a BigInt": { make: () => 12345678901234567890n, message: "12345678901234567890n" },
  "a cyclic object": {
    make: () => {
      const o: Record<string, unknown> = { name: "loop", list: [1] };
      o.self = o;
      (o.list as unknown[]).push(o);
      return o;
    },
    message: '"self":"[circular]"',
    fields: { name: "loop", list: [1, "[circular]"], self: "[circular]" },
  },
  "a Proxy that throws on every trap": { make: hostile, message: /^an object that could not be read \(reading it threw Error: trap\)$/ },
  "an Error whose message and name getters throw": {
    make: () => new MessageThrows(),
    message: /the message of this error could not be read \(reading it threw Error: message getter\)/,
    fields: { status: 503 },
  },
  "an Error with fields of its own": {
    make: () => Object.assign(new Error("HTTP 503"), { status: 503, body: { retry: true }, headers: { authorization: "Bearer sk-live-123" }, apiKey: "sk-live-456" }),
    message: "HTTP 503",
    fields: { status: 503, body: { retry: true }, headers: { authorization: "[redacted]" }, apiKey: "[redacted]" },
  },
};

const thrower = workflow("thrown-value", async (ctx, which: string) => {
  await ctx.step("before", () => "ok");
  await ctx.step("throws", () => {
    throw (CASES[which] as Case).make();
  });
  return "not reached";
});

interface Recorded {
  name?: unknown;
  message?: unknown;
  fields?: unknown;
}

describe.each(STORE_KINDS)("on %s", (kind) => {
  let s: OnStore;
  afterEach(() => s.cleanup());

  it.each(Object.keys(CASES))("%s: the journal holds the failed step with a description and its fields; the run fails with it", async (which) => {
    const c = CASES[which] as Case;
    s = await onStore(kind, "thrown-values");
    const r = await s.stead.run(thrower, which, { pollMs: 20, graceMs: 500 });
    const steps = await s.rows("SELECT step_id, status, error FROM steps WHERE run_id = ? ORDER BY seq", r.id);
    expect(steps.map((x) => [x.step_id, x.status])).toEqual([
      ["before", "completed"],
      ["throws", "failed"],
    ]);
    const rec = JSON.parse(String(steps[1]?.error)) as Recorded;
    expect(typeof rec.message).toBe("string");
    if (typeof c.message === "string") expect(rec.message).toContain(c.message);
    else expect(rec.message).toMatch(c.message);
    expect(rec.fields).toEqual(c.fields);
    const [run] = await s.rows("SELECT status, error FROM runs WHERE id = ?", r.id);
    expect(run?.status).toBe("failed");
    const runError = JSON.parse(String(run?.error)) as Recorded & { code?: string };
    expect(runError.code).toBe("STEAD_STEP_FAILED");
    expect(runError.message).toBe(rec.message);
    const events = await s.rows("SELECT type, data FROM events WHERE run_id = ? AND type = 'step.failed'", r.id);
    expect(events).toHaveLength(1);
  });
});

describe("describing a thrown value", () => {
  it("never throws, and stays bounded and valid JSON whatever the value holds", () => {
    const huge = { blob: "x".repeat(2_000_000), many: Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i])) };
    const nested: Record<string, unknown> = {};
    let at = nested;
    for (let i = 0; i < 100_000; i++) at = at.next = {};
    for (const v of [...Object.values(CASES).map((c) => c.make()), huge, nested, hostile(), Object.assign(new Error("big"), huge)]) {
      const text = encodeError(v);
      expect(text.length).toBeLessThan(64 * 1024);
      const back = JSON.parse(text) as Recorded;
      expect(typeof back.message).toBe("string");
      expect(errorRecord(v).message).toBe(back.message);
      expect(errorMessage(v)).toBe(back.message);
    }
  });
});
