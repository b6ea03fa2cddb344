/**
 * A hold's reason is what `why`, `ps`, the worker's line and the console show a person. The
 * ambiguous-effect reason read as cut off ("…after the effect's intent was committed and before
 * its outcome was"), three times in the demo's output. Made here as the demo makes it: a process
 * killed between an effect's intent and its outcome (a crash point), then a worker that finds the
 * intent without an outcome. On both stores.
 */
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { cli, requireBuild, ROOT, spawnCli } from "../cli-helpers.js";
import { onStore, STORE_KINDS, type OnStore } from "../helpers/both-stores.js";

const EFFECT = join(ROOT, "test", "fixtures", "hostile", "effect.ts");
const WHOLE = "the process stopped between recording the effect's intent and recording its outcome";

beforeAll(() => requireBuild());

describe.each(STORE_KINDS)("the ambiguous-effect hold's reason, on %s", (kind) => {
  let s: OnStore;
  afterEach(() => s.cleanup());

  it("is a whole sentence in the hold, its event and `why`", async () => {
    s = await onStore(kind, "hold-reasons");
    const store = ["--store", s.location];
    const crashed = await cli(["run", EFFECT, "--id", "charge-1", ...store], ROOT, { env: { STEAD_CRASH_AT: "after-intent:charge" } });
    expect(crashed.signal).toBe("SIGKILL");
    // The killed process's pid is gone: a worker on this host takes its run over at once.
    const worker = spawnCli(["worker", EFFECT, "--poll", "50", ...store], ROOT);
    try {
      await s.stead.runs.waitFor("charge-1", { until: (r) => r.status === "held", timeoutMs: 30_000, pollMs: 50 });
    } finally {
      worker.child.kill("SIGTERM");
      await worker.done;
    }
    const [hold] = await s.stead.holds.list({ runId: "charge-1" });
    expect(hold?.kind).toBe("ambiguous_effect");
    expect(hold?.reason).toBe(`effect step "charge" may or may not have happened: ${WHOLE}`);
    const held = (await s.stead.runs.events({ runId: "charge-1" })).find((e) => e.type === "run.held");
    expect(held?.data.reason).toBe(hold?.reason);
    const why = await cli(["why", "charge-1", ...store], ROOT);
    expect(why.stdout).toContain(`${WHOLE}.`);
    expect(why.stdout).not.toMatch(/before its outcome was\b/);
  });
});
