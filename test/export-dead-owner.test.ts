/**
 * `stead export` refuses while a worker holds a live lease, but a lease whose owner process is known
 * to be gone (same host, its pid and start time no longer match: what `stead why` reports) is not
 * live: after a worker is SIGKILLed, the export goes ahead without waiting out the lease.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { type Stead } from "../src/index.js";
import { cli, lines, requireBuild } from "./cli-helpers.js";
import { Sandbox, useSandbox } from "./fixtures/crash/harness.js";
import { STORE_KINDS } from "./helpers/both-stores.js";

beforeAll(() => requireBuild());

describe.each(STORE_KINDS)("on %s", (kind) => {
  let box: Sandbox;
  let stead: Stead;
  useSandbox(
    (b, s) => {
      box = b;
      stead = s;
    },
    kind === "postgres" ? { postgres: "export-dead-owner" } : {},
  );

  it.runIf(process.platform === "linux")("refuses under a live worker's lease, and exports once that worker is SIGKILLed, long before its lease ends", async () => {
    const worker = box.spawn({ start: [{ id: "e1", workflow: "slow" }], leaseMs: 120_000, pollMs: 20 }, { slowMs: 120_000 });
    await box.waitForEffect((l) => l.runId === "e1" && l.stepId === "slow" && l.phase === "start", "the slow step to start");
    const out = join(box.dir, "dump.jsonl");

    const live = await cli(["export", "--store", box.store, "--out", out], box.dir);
    expect(live.code).toBe(2);
    expect(lines(live.stderr)).toHaveLength(1);
    expect(live.stderr).toContain("running under a live lease (run e1");
    expect(existsSync(out)).toBe(false);

    expect(await worker.kill()).toEqual({ code: null, signal: "SIGKILL" });
    const run = await stead.runs.get("e1");
    expect(run.status).toBe("running");
    expect(run.lease?.pid).toBe(worker.pid);
    expect(run.lease?.expiresAt ?? 0).toBeGreaterThan(Date.now() + 60_000);

    const r = await cli(["export", "--store", box.store, "--out", out], box.dir);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const dumped = lines(readFileSync(out, "utf8")).map((l) => JSON.parse(l) as { t?: string; r?: { id?: string; status?: string; lease_owner?: string | null } });
    const row = dumped.find((l) => l.t === "runs" && l.r?.id === "e1");
    expect(row?.r?.status).toBe("running");
    expect(row?.r?.lease_owner).toBeTruthy();
    expect(dumped.at(-1)).toHaveProperty("stead-export-end");
  });
});
