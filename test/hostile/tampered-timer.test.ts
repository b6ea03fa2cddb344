/**
 * One changed timer wait must not stop every timer of the store. The sweeper reads the due
 * timers to wake them, and that read opened each one's sealed values, so one wait row whose
 * sealed request fails to authenticate failed the whole read: no timer in the store woke, every
 * sleeping run stayed asleep. The sweeper needs only a timer's clear columns; a damaged one is
 * left asleep (its run is marked damaged where listings read it) and the others wake.
 *
 * Three runs of one encrypted store sleep on a timer; one timer's request is given another row's
 * sealed value while no process holds the store; then a worker runs past the timers' wake time.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { createStead, localKey, workflow, type Stead } from "../../src/index.js";
import { onStore, STORE_KINDS, type OnStore } from "../helpers/both-stores.js";
import { FAST_WORKER } from "../helpers/temp-store.js";

const sleeper = workflow("hostile-sleeper", { version: "1" }, async (ctx, n: number) => {
  await ctx.sleep("nap", "1s");
  return ctx.step("woke", () => `woke ${n}`);
});

const RUNS = ["t-a", "t-b", "t-c"];
const DAMAGED = "t-b";

describe.each(STORE_KINDS)("a changed timer wait on %s", (kind) => {
  let s: OnStore | undefined;
  let stead: Stead | undefined;
  afterEach(async () => {
    await stead?.close();
    await s?.cleanup();
    s = stead = undefined;
  });

  it("leaves the other timers to wake: their runs complete, the damaged one stays asleep", async () => {
    const encryption = { key: localKey(randomBytes(32), "the test's key") };
    s = await onStore(kind, "hostile-tampered-timer", { encryption });
    for (const [i, id] of RUNS.entries()) await s.stead.runs.start(sleeper, i, { id });
    const first = s.stead.worker({ definitions: [sleeper], ...FAST_WORKER });
    first.start();
    try {
      for (const id of RUNS) await s.stead.runs.waitFor(id, { until: (r) => r.status === "waiting", timeoutMs: 30_000 });
    } finally {
      await first.stop({ graceMs: 500 });
    }
    await s.stead.close();
    // A sealed value moved from another row (another run's input): it does not authenticate here.
    await s.write("UPDATE waits SET request = (SELECT input FROM runs WHERE id = ?) WHERE run_id = ?", "t-a", DAMAGED);

    stead = createStead({ store: s.location, encryption });
    const w = stead.worker({ definitions: [sleeper], ...FAST_WORKER });
    w.start();
    try {
      for (const id of RUNS.filter((r) => r !== DAMAGED)) expect((await stead.runs.waitFor(id, { timeoutMs: 30_000 })).output).toBe(`woke ${RUNS.indexOf(id)}`);
      expect((await stead.runs.get(DAMAGED)).status).toBe("waiting");
    } finally {
      await w.stop({ graceMs: 500 });
    }
  }, 90_000);
});
