/**
 * Open waits across runs (engine/runs/open-waits.ts) on both stores, against the store's own rows: a
 * paused run's open wait is listed, an answered one is not, and the bound on runs looked at
 * (the most recently updated first) leaves the older runs' waits out and says `truncated`.
 */
import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workflow } from "../src/index.js";
import { openWaits } from "../src/engine/runs/open-waits.js";
import { STORE_KINDS, onStore, type OnStore } from "./helpers/both-stores.js";

describe.each(STORE_KINDS)("open waits across runs on %s", (kind) => {
  let s: OnStore;
  const asks = workflow("open-waits-asks", async (ctx, item: string) => ctx.approval("ship", { item }));
  beforeAll(async () => {
    s = await onStore(kind, "open-waits");
  });
  afterAll(async () => {
    await s.cleanup();
  });

  it("lists a paused run's open wait, not an answered one; a bound of runs keeps the most recently updated and says truncated", async () => {
    const ids: string[] = [];
    for (const item of ["a", "b", "c", "d"]) {
      ids.push((await s.stead.run(asks, item, { followTimersMs: 0 })).id);
      await delay(5);
    }
    const [a, b, c, d] = ids as [string, string, string, string];
    await s.stead.runs.approve(a, "ship");
    await delay(5);
    await s.stead.runs.pause(b);
    const open = (await s.rows("SELECT run_id FROM waits WHERE status = 'open'")).map((r) => String(r.run_id)).sort();
    expect(open).toEqual([b, c, d].sort());

    const all = await openWaits(s.stead.store, { kind: "approval" });
    expect(all.truncated).toBe(false);
    expect(all.waits.map((w) => w.runId)).toEqual([d, c, b]);
    expect(all.waits.find((w) => w.runId === b)).toMatchObject({ runStatus: "paused", name: "ship", status: "open" });

    const updated = (await s.rows("SELECT id FROM runs WHERE status IN ('waiting', 'paused') ORDER BY updated_at DESC, id DESC")).map((r) => String(r.id));
    const bounded = await openWaits(s.stead.store, {}, 2);
    expect(bounded.truncated).toBe(true);
    expect(bounded.waits.map((w) => w.runId).sort()).toEqual(updated.slice(0, 2).sort());
    expect((await openWaits(s.stead.store, { kind: "signal" })).waits).toEqual([]);
  });
});
