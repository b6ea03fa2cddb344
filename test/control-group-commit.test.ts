/**
 * Control commands asked for together share durable commits, as a worker's steps do: twenty
 * approvals from concurrent callers reach the disk (the WAL's commit frames) as far fewer commits
 * than twenty, and every run they answered goes on.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createStead, workflow, type Stead } from "../src/index.js";
import { FAST_WORKER, tempStorePath } from "./helpers/temp-store.js";
import { resetWal, walCommits } from "./helpers/wal-commits.js";

const gated = workflow("gated", async (ctx) => {
  const d = await ctx.approval("go");
  return d.approved;
});

describe("control group commit", () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it("twenty approvals from concurrent callers share commits, and each run completes", async () => {
    const t = tempStorePath();
    cleanups.push(() => t.remove());
    const stead: Stead = createStead({ store: t.path });
    cleanups.push(() => stead.close());
    const ids = await Promise.all(Array.from({ length: 20 }, async () => (await stead.runs.start(gated, null)).id));
    const worker = stead.worker({ definitions: [gated], concurrency: 20, ...FAST_WORKER });
    worker.start();
    for (const id of ids) await stead.runs.waitFor(id, { until: (r) => r.status === "waiting", timeoutMs: 20_000, pollMs: 20 });
    await worker.stop();
    resetWal(t.path);

    const answers = await Promise.all(ids.map((id) => stead.runs.approve(id, "go")));

    expect(walCommits(t.path)).toBeLessThanOrEqual(2);
    expect(answers).toHaveLength(20);
    const again = stead.worker({ definitions: [gated], concurrency: 20, ...FAST_WORKER });
    again.start();
    for (const id of ids) expect((await stead.runs.waitFor(id, { until: (r) => r.status === "completed", timeoutMs: 20_000, pollMs: 20 })).output).toBe(true);
    await again.stop();
  });
});
