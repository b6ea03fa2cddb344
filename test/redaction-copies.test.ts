/**
 * Redaction never changes what its caller passed: a write holding a secret is stored redacted, and
 * the caller's objects are as they were; the write's result carries the unit as it was written.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Mutation, NewRun } from "../src/store/types.js";
import { onStore, STORE_KINDS, type OnStore } from "./helpers/both-stores.js";

const SECRET = "hunter2-is-not-a-password-7f3a";

describe.each(STORE_KINDS)("redaction writes copies on %s", (kind) => {
  let s: OnStore | undefined;
  afterEach(async () => {
    await s?.cleanup();
    s = undefined;
  });

  it("stores a commit's and a new run's payloads redacted and leaves the caller's objects unchanged", async () => {
    s = await onStore(kind, "redaction-copies", { redaction: { secrets: [SECRET] } });
    const run: NewRun = { id: "r1", definition: "d", module: null, fingerprint: null, input: JSON.stringify({ key: SECRET }), createdAt: Date.now() };
    const runBefore = structuredClone(run);
    await s.stead.store.createRun(run, []);
    expect(run).toEqual(runBefore);

    const m: Mutation = {
      runId: "r1",
      steps: [{ seq: 0, stepId: "a", kind: "step", status: "completed", attempt: 1, output: JSON.stringify(`token ${SECRET}`), startedAt: 1, completedAt: 2 }],
      events: [{ type: "note", data: { said: SECRET } }],
    };
    const before = structuredClone(m);
    const [r] = await s.stead.store.commit([[m]]);
    expect(m).toEqual(before);
    expect(r).toMatchObject({ ok: true });
    const written = r?.ok ? r.written?.[0] : undefined;
    expect(written?.steps?.[0]?.output).toBe(JSON.stringify("token [redacted:secret-1]"));

    const stored = JSON.stringify([await s.rows("SELECT input FROM runs"), await s.rows("SELECT output FROM steps"), await s.rows("SELECT data FROM events")]);
    expect(stored).not.toContain(SECRET);
    expect(stored).toContain("[redacted:secret-1]");
  });
});
