/**
 * A run can park in several open waits at once, in one write (the shape the concurrent-waits work
 * builds on): the new waits and their journal steps are opened, and a wait the write expects still
 * open refuses the whole park when it has been answered meanwhile. Read from the database.
 */
import { afterEach, describe, expect, it } from "vitest";
import { parkWrite } from "../src/engine/execution/wait-steps.js";
import type { Mutation } from "../src/store/types.js";
import { onStore, STORE_KINDS, type OnStore } from "./helpers/both-stores.js";

describe.each(STORE_KINDS)("parking in several waits on %s", (kind) => {
  let s: OnStore | undefined;
  afterEach(async () => {
    await s?.cleanup();
    s = undefined;
  });

  async function parked(o: OnStore, answerFirst: boolean): Promise<boolean> {
    const store = o.stead.store;
    await store.createRun({ id: "p", definition: "d", module: null, fingerprint: null, input: "null", createdAt: Date.now() }, []);
    // The first wait, opened by an earlier park.
    await store.commit([[{ runId: "p", steps: [{ seq: 0, stepId: "ok", kind: "approval", status: "waiting", attempt: 1, output: null, startedAt: 1 }], waits: [{ name: "ok", kind: "approval", seq: 0, requestKind: "code" }] }]]);
    if (answerFirst) await store.commit([[{ runId: "p", resolveWaits: [{ name: "ok", seq: 0, status: "resolved", result: "true" }] }]]);
    const { m, expect: ex, stillOpen } = parkWrite({
      kind: "park",
      waits: [
        { wait: { name: "ok", kind: "approval", seq: 0, stepId: "ok", stepKind: "approval" }, isNew: false },
        { wait: { name: "nap", kind: "timer", seq: 1, stepId: "nap", stepKind: "sleep", wakeAt: Date.now() + 60_000 }, isNew: true },
        { wait: { name: "go", kind: "signal", seq: 2, stepId: "go", stepKind: "signal" }, isNew: true },
      ],
      newRuns: [],
    });
    const unit: Mutation[] = [{ ...m, runId: "p", expect: ex }, ...stillOpen.map((name) => ({ runId: "p", expect: { openWait: name } }))];
    const [r] = await store.commit([unit]);
    return r?.ok ?? false;
  }

  it("opens every new wait and its step in one write", async () => {
    s = await onStore(kind, "park-several");
    expect(await parked(s, false)).toBe(true);
    expect(await s.rows("SELECT name, kind, status, seq FROM waits WHERE run_id = 'p' ORDER BY seq")).toEqual([
      { name: "ok", kind: "approval", status: "open", seq: 0 },
      { name: "nap", kind: "timer", status: "open", seq: 1 },
      { name: "go", kind: "signal", status: "open", seq: 2 },
    ]);
    expect(await s.rows("SELECT step_id, status FROM steps WHERE run_id = 'p' ORDER BY seq")).toEqual([
      { step_id: "ok", status: "waiting" },
      { step_id: "nap", status: "waiting" },
      { step_id: "go", status: "waiting" },
    ]);
    expect((await s.rows("SELECT status FROM runs WHERE id = 'p'"))[0]).toEqual({ status: "waiting" });
  });

  it("refuses the whole park when a wait it expects open was answered meanwhile", async () => {
    s = await onStore(kind, "park-several-answered");
    expect(await parked(s, true)).toBe(false);
    expect(await s.rows("SELECT name FROM waits WHERE run_id = 'p'")).toEqual([{ name: "ok" }]);
  });
});
